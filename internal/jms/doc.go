// Package jms implements the OASIS "AMQP JMS Mapping" for senders that are not
// JMS clients: it turns a message into the AMQP 1.0 sections, annotations and
// properties a JMS consumer expects (TextMessage, BytesMessage, MapMessage,
// JMS headers and JMS-legal properties), maps queue and topic names to the
// address conventions of each broker family, and manages the AMQP connection,
// session and sender links the jms output sends on.
//
// It is the only package besides the jms output that imports go-amqp, so the
// output speaks in Benthos terms and this package in AMQP/JMS terms.
package jms
