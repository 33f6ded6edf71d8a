package selector

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelectorEvaluation(t *testing.T) {
	env := Env(func(name string) any {
		return map[string]any{
			"color": "red", "n": int64(5), "f": 2.5, "ok": true, "name": "order_42%",
		}[name]
	})
	tests := []struct {
		sel  string
		want bool
	}{
		{"color = 'red'", true},
		{"color <> 'red'", false},
		{"color = 'blue' OR n > 4", true},
		{"color = 'red' AND n > 5", false},
		{"n >= 5 AND n <= 5", true},
		{"n BETWEEN 1 AND 10", true},
		{"n NOT BETWEEN 1 AND 10", false},
		{"f > 2", true},
		{"n * 2 = 10", true},
		{"n / 2 = 2", true},
		{"-n < 0", true},
		{"n + f = 7.5", true},
		{"color IN ('green', 'red')", true},
		{"color NOT IN ('green', 'red')", false},
		{"color LIKE 'r%'", true},
		{"color LIKE '_ed'", true},
		{"color LIKE 'r_'", false},
		{"name LIKE 'order\\_42\\%' ESCAPE '\\'", true},
		{"name LIKE 'orderx42%' ESCAPE 'x'", false},
		{"color NOT LIKE 'b%'", true},
		{"missing IS NULL", true},
		{"color IS NOT NULL", true},
		{"missing = 'x'", false},
		{"NOT (missing = 'x')", false}, // unknown stays unknown
		{"missing = 'x' OR ok", true},
		{"ok = TRUE", true},
		{"ok", true},
		{"color = 5", false}, // type mismatch is unknown
		{"color > 'a'", false},
		{"(color = 'red' OR n = 1) AND NOT ok = FALSE", true},
		{"color = 'it''s'", false},
	}
	for _, tc := range tests {
		s, err := Compile(tc.sel)
		require.NoError(t, err, tc.sel)
		require.Equal(t, tc.want, s.Matches(env), tc.sel)
	}
	for _, bad := range []string{"", "color =", "color = 'x", "n BETWEEN 1", "x IN (1, 2)", "a LIKE 5", "a IS 5", "(a = 1", "a = 1 b", "a # 1"} {
		_, err := Compile(bad)
		require.Error(t, err, bad)
	}
}
