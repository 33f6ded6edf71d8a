package semp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBearerToken: a BearerToken replaces basic auth on every request, and
// its failure fails the request at once, without retries.
func TestBearerToken(t *testing.T) {
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":{"queueName":"q"},"meta":{"responseCode":200}}`))
	}))
	t.Cleanup(srv.Close)
	n := 0
	c, err := New(Config{URL: srv.URL, Username: "admin", Password: "admin", BearerToken: func(context.Context) (string, error) {
		n++
		if n == 3 {
			return "", errors.New("token endpoint down")
		}
		return "tok-" + string(rune('0'+n)), nil
	}})
	require.NoError(t, err)
	_, err = c.GetQueue(t.Context(), "default", "q")
	require.NoError(t, err)
	_, err = c.GetQueue(t.Context(), "default", "q")
	require.NoError(t, err)
	assert.Equal(t, []string{"Bearer tok-1", "Bearer tok-2"}, auths)
	_, err = c.GetQueue(t.Context(), "default", "q")
	require.ErrorContains(t, err, "no OAuth token: token endpoint down")
	assert.Len(t, auths, 2, "no request without a token")
	assert.Equal(t, 3, n, "no retry of a token failure")
}
