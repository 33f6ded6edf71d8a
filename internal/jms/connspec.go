package jms

import (
	"crypto/tls"
	"errors"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/secretfile"
)

// The connection fields are shared by the jms input and the jms output, so
// both components take the same URLs, SASL credentials, TLS settings and
// address presets, parsed and checked by one piece of code.
const (
	FieldURLs         = "urls"
	FieldUsername     = "username"
	FieldPassword     = "password"
	FieldPasswordFile = "password_file"
	FieldTLS          = "tls"
	FieldAddressStyle = "address_style"
	FieldQueuePrefix  = "queue_prefix"
	FieldTopicPrefix  = "topic_prefix"
)

// ConnectionFields returns the spec fields of a JMS broker connection, in the
// order they appear in the docs.
func ConnectionFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewURLListField(FieldURLs).
			Description("Broker URLs, `amqp://host:port` or `amqps://host:port`. With several, they are tried in order and the next one is used after a failure. Comma-separated entries are split.").
			Example([]string{"amqp://localhost:5672"}).
			Example([]string{"amqps://broker-a:5671", "amqps://broker-b:5671"}),
		service.NewStringField(FieldUsername).
			Description("User name for SASL PLAIN. When empty, SASL ANONYMOUS is used.").
			Default(""),
		service.NewStringField(FieldPassword).
			Description("Password for SASL PLAIN. Mutually exclusive with `password_file`.").
			Default("").
			Secret(),
		secretfile.PasswordFileField(FieldPasswordFile, "the password for SASL PLAIN", "/var/run/secrets/jms/password"),
		service.NewTLSToggledField(FieldTLS).
			Description("TLS settings. `amqps://` URLs always use TLS; enabling this also uses it for `amqp://` URLs."),
		service.NewStringEnumField(FieldAddressStyle, Styles...).
			Description(`How a queue or topic name becomes an AMQP address:

- ` + "`auto`" + `: the ` + "`queue-prefix`" + `/` + "`topic-prefix`" + ` the broker advertises in its connection properties (ActiveMQ does); ` + "`rabbitmq`" + ` when the broker says it is RabbitMQ; otherwise the plain name with ` + "`queue`" + `/` + "`topic`" + ` target capabilities.
- ` + "`activemq`" + `: ` + "`queue://name`" + `, ` + "`topic://name`" + `.
- ` + "`artemis`" + `: the plain name with target capability ` + "`queue`" + ` or ` + "`topic`" + `, which selects anycast or multicast routing; ` + "`queue_prefix`" + `/` + "`topic_prefix`" + ` for acceptors configured with ` + "`anycastPrefix`" + `/` + "`multicastPrefix`" + `.
- ` + "`rabbitmq`" + `: ` + "`/queue/name`" + ` (RabbitMQ declares the queue) and ` + "`/topic/name`" + ` (exchange ` + "`amq.topic`" + `, routing key ` + "`name`" + `); a name starting with ` + "`/`" + `, such as ` + "`/exchange/logs/info`" + `, is used as given.
- ` + "`solace`" + `: the plain name for a queue and ` + "`topic://name`" + ` for a topic, with target capabilities.
- ` + "`custom`" + `: ` + "`queue_prefix`" + ` and ` + "`topic_prefix`" + ` as given.

A name that already starts with the style's prefix is not prefixed again.`).
			Default(StyleAuto),
		service.NewStringField(FieldQueuePrefix).
			Description("Prefix for queue addresses with `address_style: custom` or `artemis`.").
			Default("").
			Advanced(),
		service.NewStringField(FieldTopicPrefix).
			Description("Prefix for topic addresses with `address_style: custom` or `artemis`.").
			Default("").
			Advanced(),
	}
}

// ConnConfig is a parsed connection: how to dial, where the password comes
// from and how names become addresses.
type ConnConfig struct {
	// Dial holds URLs, Username, Password (as configured), TLS and ForceTLS.
	Dial DialConfig
	// PasswordFile, when set, names the file the password is read from on
	// every connect, so a rotated secret is picked up by the next reconnect.
	PasswordFile string

	Style       string
	QueuePrefix string
	TopicPrefix string
}

// ConnConfigFromParsed reads the fields of ConnectionFields and checks them.
func ConnConfigFromParsed(conf *service.ParsedConfig) (ConnConfig, error) {
	var c ConnConfig
	urls, err := conf.FieldStringList(FieldURLs)
	if err != nil {
		return c, err
	}
	for _, u := range urls {
		for _, part := range strings.Split(u, ",") {
			if part = strings.TrimSpace(part); part != "" {
				c.Dial.URLs = append(c.Dial.URLs, part)
			}
		}
	}
	if len(c.Dial.URLs) == 0 {
		return c, errors.New("field urls must list at least one broker URL")
	}
	if c.Dial.Username, err = conf.FieldString(FieldUsername); err != nil {
		return c, err
	}
	if c.Dial.Password, err = conf.FieldString(FieldPassword); err != nil {
		return c, err
	}
	if c.PasswordFile, err = conf.FieldString(FieldPasswordFile); err != nil {
		return c, err
	}
	if c.Dial.Password != "" && c.PasswordFile != "" {
		return c, secretfile.BothSetError(FieldPassword, FieldPasswordFile)
	}
	var tlsConf *tls.Config
	if tlsConf, c.Dial.ForceTLS, err = conf.FieldTLSToggled(FieldTLS); err != nil {
		return c, err
	}
	c.Dial.TLS = tlsConf
	if c.Style, err = conf.FieldString(FieldAddressStyle); err != nil {
		return c, err
	}
	if c.QueuePrefix, err = conf.FieldString(FieldQueuePrefix); err != nil {
		return c, err
	}
	if c.TopicPrefix, err = conf.FieldString(FieldTopicPrefix); err != nil {
		return c, err
	}
	// Validate the style now rather than at the first connection.
	if _, err = NewAddresser(c.Style, c.QueuePrefix, c.TopicPrefix, nil); err != nil {
		return c, err
	}
	return c, nil
}

// ResolvedDial returns the dial settings for one connect, with the password
// read from PasswordFile when that is set.
func (c ConnConfig) ResolvedDial() (DialConfig, error) {
	d := c.Dial
	var err error
	if d.Password, err = secretfile.Resolve(d.Password, FieldPasswordFile, c.PasswordFile); err != nil {
		return d, err
	}
	return d, nil
}

// Addresser builds the address mapping for a connection whose open frame
// carried connProps.
func (c ConnConfig) Addresser(connProps map[string]any) (Addresser, error) {
	return NewAddresser(c.Style, c.QueuePrefix, c.TopicPrefix, connProps)
}
