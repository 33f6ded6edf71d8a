package jmscfg

// This file is a sending component's own link settings (jms.LinkSettings).

import (
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/jms"
)

// SenderLinkFields returns the spec fields LinkSettingsFromParsed reads.
func SenderLinkFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewBoolField(FieldAnonymousRelay).
			Description("Send over one anonymous-relay link when the broker offers `ANONYMOUS-RELAY`. Disable to always use a link per destination.").
			Default(true).
			Advanced(),
		service.NewIntField(FieldLinkCacheSize).
			Description("How many per-destination links to keep open when anonymous relay is not used.").
			Default(64).
			Advanced(),
		service.NewStringField(FieldContainerID).
			Description("AMQP container ID (the JMS client ID seen by the broker). Empty means random.").
			Default("").
			Advanced(),
	}
}

// LinkSettingsFromParsed reads the fields of SenderLinkFields and checks them.
func LinkSettingsFromParsed(conf *service.ParsedConfig) (jms.LinkSettings, error) {
	var l jms.LinkSettings
	var err error
	if l.AnonymousRelay, err = conf.FieldBool(FieldAnonymousRelay); err != nil {
		return l, err
	}
	if l.LinkCacheSize, err = conf.FieldInt(FieldLinkCacheSize); err != nil {
		return l, err
	}
	if l.LinkCacheSize < 1 {
		return l, fmt.Errorf("field %s must be at least 1, got %d", FieldLinkCacheSize, l.LinkCacheSize)
	}
	l.ContainerID, err = conf.FieldString(FieldContainerID)
	return l, err
}
