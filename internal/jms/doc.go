// Package jms implements the OASIS "AMQP JMS Mapping" for senders that are not
// JMS clients: it turns a message into the AMQP 1.0 sections, annotations and
// properties a JMS consumer expects (TextMessage, BytesMessage, MapMessage,
// JMS headers and JMS-legal properties), maps queue and topic names to the
// address conventions of each broker family, and manages the connections,
// sessions and links the jms output sends on and the jms input receives on.
//
// Sending runs on internal/amqpwire (SendConn, Sender), which writes
// transfers straight into the socket buffer; receiving runs on go-amqp
// (Conn, Receiver). The plugins speak in Benthos terms and this package in
// AMQP/JMS terms.
package jms
