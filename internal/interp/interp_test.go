package interp

import (
	"errors"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// msg is the message type of the test rules: a field per rule.
type msg struct{ static, dynamic, empty, absent, bad, checked string }

var rules = []Rule[msg]{
	{Name: "static", Apply: func(m *msg, v string) error { m.static = v; return nil }},
	{Name: "dynamic", Apply: func(m *msg, v string) error { m.dynamic = v; return nil }},
	{Name: "empty", Apply: func(m *msg, v string) error { m.empty = "applied"; return nil }},
	{Name: "absent", Apply: func(m *msg, v string) error { m.absent = "applied"; return nil }},
	{Name: "bad", Apply: func(m *msg, v string) error { m.bad = v; return nil }},
	{Name: "checked", Apply: func(m *msg, v string) error {
		if v == "no" {
			return errors.New(`"no" is refused`)
		}
		m.checked = v
		return nil
	}},
}

var spec = service.NewConfigSpec().Fields(
	service.NewInterpolatedStringField("static"),
	service.NewInterpolatedStringField("dynamic"),
	service.NewInterpolatedStringField("empty").Default(""),
	service.NewInterpolatedStringField("absent").Optional(),
	service.NewInterpolatedStringField("bad"),
	service.NewInterpolatedStringField("checked").Default(""),
)

func TestPlan(t *testing.T) {
	conf, err := spec.ParseYAML(`
static: q1
dynamic: 'q-${! meta("n") }'
bad: '${! throw("no") }'
checked: '${! meta("c") }'
`, nil)
	require.NoError(t, err)
	var tmpl msg
	p, err := NewPlan(conf, &tmpl, rules)
	require.NoError(t, err)
	assert.Equal(t, msg{static: "q1"}, tmpl, "static values are applied to the template once; empty and absent ones not at all")
	for name, want := range map[string]bool{"static": false, "dynamic": true, "empty": false, "absent": false, "bad": true} {
		assert.Equal(t, want, p.Dynamic(name), name)
	}

	batch := service.MessageBatch{service.NewMessage(nil), service.NewMessage(nil)}
	batch[0].MetaSetMut("n", "a")
	batch[0].MetaSetMut("c", "yes")
	batch[1].MetaSetMut("n", "b")
	batch[1].MetaSetMut("c", "no")
	ev := p.Batch(batch)
	m := tmpl
	require.ErrorContains(t, ev.Apply(&m, 0), "field bad: ", "an evaluation error names the field")

	ok, err := NewPlan(conf, new(msg), []Rule[msg]{rules[1], rules[5]})
	require.NoError(t, err)
	ev = ok.Batch(batch)
	m = msg{}
	require.NoError(t, ev.Apply(&m, 0))
	assert.Equal(t, msg{dynamic: "q-a", checked: "yes"}, m)
	m = msg{}
	require.EqualError(t, ev.Apply(&m, 1), `field checked: "no" is refused`, "a rule's error names the field")
}

func TestPlanRefusesBadStaticValue(t *testing.T) {
	conf, err := spec.ParseYAML("static: a\ndynamic: b\nbad: c\nchecked: 'no'", nil)
	require.NoError(t, err)
	_, err = NewPlan(conf, new(msg), rules)
	require.EqualError(t, err, `field checked: "no" is refused`)
}

// Check, which lint rules call, says what NewPlan says of a static value
// and nothing of a dynamic, empty or unparsable one.
func TestCheck(t *testing.T) {
	r := rules[5]
	require.EqualError(t, Check(r, "no"), `field checked: "no" is refused`)
	for _, raw := range []string{"yes", "", `${! meta("c") }`, "${! nope("} {
		require.NoError(t, Check(r, raw), raw)
	}
}

// A Required field fails a message whose value is empty or whose lone query
// gives null (Benthos renders it "null"), naming the field; the text "null"
// from a literal or inside a longer value is a value like any other.
func TestPlanRequired(t *testing.T) {
	type dest struct{ name string }
	req := []Rule[dest]{{Name: "topic", Required: true, Apply: func(d *dest, v string) error { d.name = v; return nil }}}
	spec := service.NewConfigSpec().Fields(service.NewInterpolatedStringField("topic"))
	for _, tc := range []struct {
		raw, meta string
		set       bool
		want      string // "" means refused
	}{
		{raw: `${! meta("t") }`, set: true, meta: "a/b", want: "a/b"},
		{raw: `${! meta("t") }`, set: true, meta: ""},
		{raw: `${! meta("t") }`},
		{raw: `${! @t }`},
		{raw: `${!@t}`},
		{raw: `${! "null" }`, want: "null"},
		{raw: `${! @t.or("") }`},
		{raw: `x/${! @t }`, want: "x/null"},
		{raw: `${! @t }`, set: true, meta: "null", want: "null"},
	} {
		conf, err := spec.ParseYAML("topic: '"+tc.raw+"'", nil)
		require.NoError(t, err)
		var tmpl dest
		p, err := NewPlan(conf, &tmpl, req)
		require.NoError(t, err)
		m := service.NewMessage(nil)
		if tc.set {
			m.MetaSetMut("t", tc.meta)
		}
		ev := p.Batch(service.MessageBatch{m})
		d := tmpl
		err = ev.Apply(&d, 0)
		if tc.want == "" {
			require.ErrorContains(t, err, "field topic: evaluated empty", "%q with %q", tc.raw, tc.meta)
			continue
		}
		require.NoError(t, err, tc.raw)
		assert.Equal(t, tc.want, d.name, tc.raw)
	}
}
