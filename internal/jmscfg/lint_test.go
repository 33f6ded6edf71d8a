package jmscfg

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"

	"github.com/connect-solace/connect-solace/internal/lintmethod"
)

// The method behind a lint rule of the connection fields, registered as the
// jms plugins register theirs, for a config whose destination is set.
var _ = lintmethod.Register("jmscfg_test_lint", "test only",
	func() *service.ConfigSpec { return service.NewConfigSpec().Fields(ConnectionFields()...) },
	func(pc *service.ParsedConfig) ([]error, error) { return lintProblems(pc, true, false) })

// TestDestinationError checks the rule that exactly one of queue and topic
// is set, which lint reports first.
func TestDestinationError(t *testing.T) {
	for _, tc := range []struct {
		name         string
		queue, topic bool
		want         string
	}{
		{"queue", true, false, ""},
		{"topic", false, true, ""},
		{"neither", false, false, "field queue or topic is required"},
		{"both", true, true, "fields queue and topic are both set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := DestinationError(tc.queue, tc.topic)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			pc, perr := service.NewConfigSpec().Fields(ConnectionFields()...).ParseYAML("urls: [ amqp://h ]", nil)
			require.NoError(t, perr)
			got, perr := lintProblems(pc, tc.queue, tc.topic)
			require.NoError(t, perr)
			require.Equal(t, []error{err}, got)
		})
	}
}

// TestConnectionProblems checks the lint rule reports every contradiction
// among the connection fields, in the constructor's words where the
// constructor refuses the config too.
func TestConnectionProblems(t *testing.T) {
	exe, err := bloblang.Parse(lintmethod.Rule("jmscfg_test_lint"))
	require.NoError(t, err)
	const (
		prefixes     = "fields queue_prefix and topic_prefix only apply with address_style: custom or artemis; set address_style: custom or remove the prefixes"
		bothSet      = "fields password and password_file: both are set; keep one (prefer password_file in streams mode, where the API shows password)"
		passwordOnly = "field password is set without username: set username too, or remove password to use SASL ANONYMOUS"
		fileOnly     = "field password_file is set without username: set username too, or remove password_file to use SASL ANONYMOUS"
	)
	for _, tc := range []struct {
		name string
		conf any
		want []any
	}{
		{"fine", map[string]any{"urls": []any{"amqp://h"}}, []any{}},
		{"prefix without a prefix style", map[string]any{"urls": []any{"amqp://h"}, "queue_prefix": "x://"}, []any{prefixes}},
		{"prefix with custom", map[string]any{"urls": []any{"amqp://h"}, "topic_prefix": "x://", "address_style": "custom"}, []any{}},
		{"prefix with artemis", map[string]any{"urls": []any{"amqp://h"}, "topic_prefix": "x://", "address_style": "artemis"}, []any{}},
		{"every contradiction", map[string]any{"urls": []any{"amqp://h"}, "queue_prefix": "x://", "password": "p", "password_file": "/f"}, []any{prefixes, bothSet, passwordOnly, fileOnly}},
		{"password without username", map[string]any{"urls": []any{"amqp://h"}, "password": "p", "username": ""}, []any{passwordOnly}},
		{"password_file without username", map[string]any{"urls": []any{"amqp://h"}, "password_file": "/f"}, []any{fileOnly}},
		{"password_file with username", map[string]any{"urls": []any{"amqp://h"}, "password_file": "/f", "username": "u"}, []any{}},
		{"not an object", "queue", []any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := exe.Query(tc.conf)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
