// Package jms implements the OASIS "AMQP JMS Mapping" for senders that are not
// JMS clients: it turns a message into the AMQP 1.0 sections, annotations and
// properties a JMS consumer expects (TextMessage, BytesMessage, MapMessage,
// JMS headers and JMS-legal properties), maps queue and topic names to the
// address conventions of each broker family, and manages the connections,
// sessions and links the jms output sends on and the jms input receives on.
//
// Both directions run on internal/amqpwire, over one Conn type: sending
// (Sender) writes transfers straight into the socket buffer, receiving
// (Receiver) queues each delivery's bytes once and Decode reads its sections
// in place. go-amqp's own send and receive paths cost several times the CPU
// per message, and its automatic credit renewal stalls on RabbitMQ 3.10 (see
// CreditWindow). The plugins speak in Benthos terms (their shared fields
// live in internal/jmscfg) and this package in AMQP/JMS terms.
package jms
