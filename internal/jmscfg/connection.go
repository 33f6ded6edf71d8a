// Package jmscfg holds the Benthos-facing pieces both jms plugins share: the
// start of their specs (Spec), the connection fields and a sending
// component's link fields, their reading into internal/jms's settings, the
// queue-or-topic rule, and the lint method reporting them (RegisterLint).
// internal/jms speaks AMQP and JMS, not Benthos.
package jmscfg

import (
	"crypto/tls"
	"errors"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/jms"
	"github.com/connect-solace/connect-solace/internal/lintmethod"
	"github.com/connect-solace/connect-solace/internal/secretfile"
)

// The package's field names. The connection fields are shared by the jms
// input and the jms output, so both components take the same URLs, SASL
// credentials, TLS settings and address presets, parsed and checked by one
// piece of code.
const (
	FieldURLs         = "urls"
	FieldUsername     = "username"
	FieldPassword     = "password"
	FieldPasswordFile = "password_file"
	FieldTLS          = "tls"
	FieldAddressStyle = "address_style"
	FieldQueuePrefix  = "queue_prefix"
	FieldTopicPrefix  = "topic_prefix"

	// A sending component's own link settings (link.go).
	FieldAnonymousRelay = "anonymous_relay"
	FieldLinkCacheSize  = "link_cache_size"
	FieldContainerID    = "container_id"
)

// Spec starts the spec of a jms plugin: its status and category, its summary
// and description, the connection fields, and the lint rule that calls the
// plugin's lint method (see RegisterLint). The plugin adds its own fields.
func Spec(summary, description, lintMethod string) *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Summary(summary).
		Description(description).
		Fields(ConnectionFields()...).
		LintRule(lintmethod.Rule(lintMethod))
}

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
		secretfile.PasswordField(FieldPassword, "Password for SASL PLAIN."),
		secretfile.PasswordFileField(FieldPasswordFile, "the password for SASL PLAIN", "/var/run/secrets/jms/password"),
		service.NewTLSToggledField(FieldTLS).
			Description("TLS settings. `amqps://` URLs always use TLS; enabling this also uses it for `amqp://` URLs."),
		service.NewStringEnumField(FieldAddressStyle, jms.Styles...).
			Description(`How a queue or topic name becomes an AMQP address:

- ` + "`auto`" + `: the ` + "`queue-prefix`" + `/` + "`topic-prefix`" + ` the broker advertises in its connection properties (ActiveMQ does); ` + "`rabbitmq`" + ` when the broker says it is RabbitMQ; otherwise the plain name with ` + "`queue`" + `/` + "`topic`" + ` target capabilities.
- ` + "`activemq`" + `: ` + "`queue://name`" + `, ` + "`topic://name`" + `.
- ` + "`artemis`" + `: the plain name with target capability ` + "`queue`" + ` or ` + "`topic`" + `, which selects anycast or multicast routing; ` + "`queue_prefix`" + `/` + "`topic_prefix`" + ` for acceptors configured with ` + "`anycastPrefix`" + `/` + "`multicastPrefix`" + `.
- ` + "`rabbitmq`" + `: ` + "`/queue/name`" + ` (RabbitMQ declares the queue) and ` + "`/topic/name`" + ` (exchange ` + "`amq.topic`" + `, routing key ` + "`name`" + `); a name starting with ` + "`/`" + `, such as ` + "`/exchange/logs/info`" + `, is used as given.
- ` + "`solace`" + `: the plain name for a queue and ` + "`topic://name`" + ` for a topic, with target capabilities.
- ` + "`custom`" + `: ` + "`queue_prefix`" + ` and ` + "`topic_prefix`" + ` as given.

A name that already starts with the style's prefix is not prefixed again.`).
			Default(jms.StyleAuto),
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

// connFields are the connection fields as written, before any file is read
// or TLS set up: what lint checks.
type connFields struct {
	urls                             []string
	username, password, passwordFile string
	style, queuePrefix, topicPrefix  string
}

// readConnFields reads the fields of ConnectionFields but tls.
func readConnFields(conf *service.ParsedConfig) (connFields, error) {
	var f connFields
	urls, err := conf.FieldStringList(FieldURLs)
	if err != nil {
		return f, err
	}
	for _, u := range urls {
		for _, part := range strings.Split(u, ",") {
			if part = strings.TrimSpace(part); part != "" {
				f.urls = append(f.urls, part)
			}
		}
	}
	for _, s := range []struct {
		field string
		dst   *string
	}{
		{FieldUsername, &f.username}, {FieldPassword, &f.password}, {FieldPasswordFile, &f.passwordFile},
		{FieldAddressStyle, &f.style}, {FieldQueuePrefix, &f.queuePrefix}, {FieldTopicPrefix, &f.topicPrefix},
	} {
		if *s.dst, err = conf.FieldString(s.field); err != nil {
			return f, err
		}
	}
	return f, nil
}

// secretProblem is the error of a password given twice, or nil.
func (f connFields) secretProblem() error {
	if f.password != "" && f.passwordFile != "" {
		return secretfile.BothSetError(FieldPassword, FieldPasswordFile)
	}
	return nil
}

// problems are the contradictions among the connection fields, which lint
// reports. The constructor refuses a password given twice too (see
// ConnConfigFromParsed); the others it lets pass.
func (f connFields) problems() []error {
	var errs []error
	if (f.queuePrefix != "" || f.topicPrefix != "") && f.style != jms.StyleCustom && f.style != jms.StyleArtemis {
		errs = append(errs, errors.New("fields queue_prefix and topic_prefix only apply with address_style: custom or artemis; set address_style: custom or remove the prefixes"))
	}
	if err := f.secretProblem(); err != nil {
		errs = append(errs, err)
	}
	if f.password != "" && f.username == "" {
		errs = append(errs, errors.New("field password is set without username: set username too, or remove password to use SASL ANONYMOUS"))
	}
	if f.passwordFile != "" && f.username == "" {
		errs = append(errs, errors.New("field password_file is set without username: set username too, or remove password_file to use SASL ANONYMOUS"))
	}
	return errs
}

// DestinationError is the rule of both jms plugins that exactly one of
// their fields queue and topic is set, or nil.
func DestinationError(queue, topic bool) error {
	switch {
	case !queue && !topic:
		return errors.New("field queue or topic is required: set queue: <name> for a queue (point-to-point) or topic: <name> for a topic (publish/subscribe)")
	case queue && topic:
		return errors.New("fields queue and topic are both set: a JMS destination is either a queue or a topic, remove one of them")
	}
	return nil
}

// RegisterLint registers method, the lint method of the jms plugin whose
// spec spec returns, which the lint rule Spec gives the plugin calls: it
// reports lintProblems, destination saying whether the plugin's queue and
// topic are set.
func RegisterLint(method string, spec func() *service.ConfigSpec, destination func(*service.ParsedConfig) (queue, topic bool, err error)) bool {
	return lintmethod.Register(method,
		"Internal to the lint rule of a jms plugin: the problems of the destination and connection fields of the linted config, as a list of messages.",
		sync.OnceValue(spec), func(pc *service.ParsedConfig) ([]error, error) {
			queue, topic, err := destination(pc)
			if err != nil {
				return nil, err
			}
			return lintProblems(pc, queue, topic)
		})
}

// lintProblems are what a jms plugin's lint rule reports: the destination
// rule, given whether the plugin's queue and topic are set, then the
// contradictions among the connection fields of conf.
func lintProblems(conf *service.ParsedConfig, queue, topic bool) ([]error, error) {
	var errs []error
	if err := DestinationError(queue, topic); err != nil {
		errs = append(errs, err)
	}
	f, err := readConnFields(conf)
	if err != nil {
		return nil, err
	}
	return append(errs, f.problems()...), nil
}

// ConnConfigFromParsed reads the fields of ConnectionFields and checks them.
// A password_file is read on every connect, not here.
func ConnConfigFromParsed(conf *service.ParsedConfig) (jms.ConnConfig, error) {
	var c jms.ConnConfig
	f, err := readConnFields(conf)
	if err != nil {
		return c, err
	}
	if len(f.urls) == 0 {
		return c, errors.New("field urls must list at least one broker URL")
	}
	if err := f.secretProblem(); err != nil {
		return c, err
	}
	c.Dial.URLs, c.Dial.Username, c.Dial.Password = f.urls, f.username, f.password
	if path := f.passwordFile; path != "" {
		c.Password = func() (string, error) { return secretfile.Read(FieldPasswordFile, path) }
	}
	var tlsConf *tls.Config
	if tlsConf, c.Dial.ForceTLS, err = conf.FieldTLSToggled(FieldTLS); err != nil {
		return c, err
	}
	c.Dial.TLS = tlsConf
	c.Style, c.QueuePrefix, c.TopicPrefix = f.style, f.queuePrefix, f.topicPrefix
	// Validate the style now rather than at the first connection.
	if _, err = jms.NewAddresser(c.Style, c.QueuePrefix, c.TopicPrefix, nil); err != nil {
		return c, err
	}
	return c, nil
}
