package solacecfg

import (
	"fmt"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/require"
)

// TestURLCredentialsRefusedWithoutLeaking checks that credentials written
// into a Solace URL (which the Solace client does not take from a URL) are
// refused at lint time and by Validate, naming the field, and that neither
// those errors nor the config's String form carry the password.
func TestURLCredentialsRefusedWithoutLeaking(t *testing.T) {
	const secret = "s3cret-in-url"
	env := service.NewEnvironment()
	require.NoError(t, env.RegisterOutput("session_url_cred_test", testSpec(),
		func(*service.ParsedConfig, *service.Resources) (service.Output, int, error) { return nil, 1, nil }))

	tests := []struct {
		name, url string
		lintWant  string
	}{
		{name: "tcp with user and password", url: "tcp://app:" + secret + "@broker:55555", lintWant: "field urls[1]: credentials"},
		{name: "tcps with user and password", url: "tcps://app:" + secret + "@broker:55443", lintWant: "field urls[1]: credentials"},
		{name: "no scheme", url: "app:" + secret + "@broker:55555", lintWant: "field urls[1]: credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			urls := []string{"tcp://ok:55555", tt.url}
			err := env.NewStreamBuilder().AddOutputYAML(fmt.Sprintf(
				"session_url_cred_test:\n  urls: [ %q, %q ]\n  username: u", urls[0], urls[1]))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.lintWant)
			require.NotContains(t, err.Error(), secret)

			cfg := defaultConfig(urls...)
			cfg.Username = "u"
			err = cfg.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), "credentials (user:password@) in a Solace URL are not supported")
			require.Contains(t, err.Error(), "app:xxxxx@", "the error names the URL, redacted")
			require.NotContains(t, err.Error(), secret)

			require.NotContains(t, cfg.String(), secret)
			require.NotContains(t, fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg), secret)
		})
	}
}
