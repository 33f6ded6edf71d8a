package solacetest

// This file evaluates consumer-flow selectors: the JMS message-selector
// language (a subset of SQL-92 conditional expressions) over a message's user
// properties and a few JMS header fields, which the Solace Go client passes
// to the broker when a receiver is built WithMessageSelector.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ---- SDT (structured data) decoding, for the binary-metadata section ----

// SDT type codes.
const (
	sdtNull   = 0
	sdtBool   = 1
	sdtInt    = 2
	sdtUint   = 3
	sdtFloat  = 4
	sdtChar   = 5
	sdtBytes  = 6
	sdtString = 7
	sdtMap    = 10
	sdtStream = 11
)

// sdtItem reads one SDT item at the start of b: its type, payload and the
// bytes it took up. The tag byte holds type<<2 | (length bytes - 1); the
// length counts the tag and length bytes.
func sdtItem(b []byte) (typ byte, payload []byte, n int, err error) {
	if len(b) < 2 {
		return 0, nil, 0, errors.New("short SDT item")
	}
	typ, lb := b[0]>>2, int(b[0]&3)+1
	if len(b) < 1+lb {
		return 0, nil, 0, errors.New("short SDT length")
	}
	l := int(beUint(b[1 : 1+lb]))
	if l < 1+lb || l > len(b) {
		return 0, nil, 0, fmt.Errorf("SDT item length %d", l)
	}
	return typ, b[1+lb : l], l, nil
}

// sdtValue converts a scalar SDT item to a selector value: bool, int64,
// float64 or string; nil for types a selector cannot use.
func sdtValue(typ byte, p []byte) any {
	switch typ {
	case sdtBool:
		return len(p) == 1 && p[0] != 0
	case sdtInt:
		switch len(p) {
		case 1:
			return int64(int8(p[0]))
		case 2:
			return int64(int16(binary.BigEndian.Uint16(p)))
		case 4:
			return int64(int32(binary.BigEndian.Uint32(p)))
		case 8:
			return int64(binary.BigEndian.Uint64(p))
		}
	case sdtUint:
		if len(p) > 0 && len(p) <= 8 {
			v := beUint(p)
			if v > math.MaxInt64 {
				return float64(v)
			}
			return int64(v)
		}
	case sdtFloat:
		switch len(p) {
		case 4:
			return float64(math.Float32frombits(binary.BigEndian.Uint32(p)))
		case 8:
			return math.Float64frombits(binary.BigEndian.Uint64(p))
		}
	case sdtChar:
		if len(p) == 2 {
			return string(rune(binary.BigEndian.Uint16(p)))
		}
	case sdtString:
		return trimNUL(p)
	}
	return nil
}

// sdtMapValues decodes an SDT map payload into its scalar entries; nested
// maps are returned as map[string]any.
func sdtMapValues(p []byte) map[string]any {
	out := map[string]any{}
	for len(p) > 0 {
		kt, kp, n, err := sdtItem(p)
		if err != nil || kt != sdtString {
			return out
		}
		p = p[n:]
		vt, vp, n, err := sdtItem(p)
		if err != nil {
			return out
		}
		p = p[n:]
		if vt == sdtMap {
			out[trimNUL(kp)] = sdtMapValues(vp)
		} else {
			out[trimNUL(kp)] = sdtValue(vt, vp)
		}
	}
	return out
}

// messageMetadata returns the header map ("h": mi application message id,
// ci correlation id, mt application message type, ...) and the user
// properties ("p") carried in a message's binary-metadata section.
func messageMetadata(summary, payload []byte) (headers, props map[string]any) {
	secs, err := decodeContentsSummary(summary)
	if err != nil {
		return nil, nil
	}
	off := 0
	for _, s := range secs {
		if off+s.Len > len(payload) {
			return nil, nil
		}
		if s.Type == sectionBinaryMeta {
			return binaryMetadata(payload[off : off+s.Len])
		}
		off += s.Len
	}
	return nil, nil
}

// binaryMetadata walks the binary-metadata section: a block count, 4-byte
// index entries (type, 24-bit length), then the blocks; block type 0 is an
// SDT stream whose map holds "h" and "p".
func binaryMetadata(b []byte) (headers, props map[string]any) {
	if len(b) < 1 {
		return nil, nil
	}
	nb := int(b[0])
	if len(b) < 1+4*nb {
		return nil, nil
	}
	off := 1 + 4*nb
	for i := range nb {
		e := b[1+4*i : 5+4*i]
		l := int(beUint(e[1:4]))
		if off+l > len(b) {
			return nil, nil
		}
		if e[0] == 0 {
			walkSDT(b[off:off+l], func(m map[string]any) {
				if h, ok := m["h"].(map[string]any); ok {
					headers = h
				}
				if p, ok := m["p"].(map[string]any); ok {
					props = p
				}
			})
		}
		off += l
	}
	return headers, props
}

// walkSDT calls fn for every map found in a sequence of SDT items, looking
// inside streams.
func walkSDT(b []byte, fn func(map[string]any)) {
	for len(b) > 0 {
		t, p, n, err := sdtItem(b)
		if err != nil {
			return
		}
		switch t {
		case sdtStream:
			walkSDT(p, fn)
		case sdtMap:
			fn(sdtMapValues(p))
		}
		b = b[n:]
	}
}

// ---- selector language ----

// selector is a compiled message selector.
type selector struct {
	text string
	root selExpr
}

// selExpr evaluates to nil (unknown), bool, int64, float64 or string.
type selExpr func(selEnv) any

// selEnv resolves identifiers for one message.
type selEnv func(name string) any

// envFor builds the identifier lookup for a stored message: JMS header
// names map to the message's header fields, anything else to a user
// property.
func envFor(m *storedMsg) selEnv {
	headers, props := messageMetadata(m.summary, m.payload)
	return func(name string) any {
		switch name {
		case "JMSCorrelationID":
			return headers["ci"]
		case "JMSMessageID":
			return headers["mi"]
		case "JMSType":
			return headers["mt"]
		case "JMSPriority":
			return int64(m.priority)
		case "JMSDeliveryMode":
			if m.persistent {
				return "PERSISTENT"
			}
			return "NON_PERSISTENT"
		}
		return props[name]
	}
}

func (s *selector) matches(m *storedMsg) bool {
	if s == nil {
		return true
	}
	v, _ := s.root(envFor(m)).(bool)
	return v
}

// compileSelector parses a JMS message selector.
func compileSelector(text string) (*selector, error) {
	toks, err := lexSelector(text)
	if err != nil {
		return nil, err
	}
	p := &selParser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tEOF {
		return nil, fmt.Errorf("unexpected %q", p.peek().text)
	}
	return &selector{text: text, root: e}, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tInt
	tFloat
	tOp
	tKeyword
)

type token struct {
	kind tokKind
	text string
}

var selKeywords = map[string]bool{"AND": true, "OR": true, "NOT": true, "BETWEEN": true, "LIKE": true,
	"IN": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true, "ESCAPE": true}

func lexSelector(s string) ([]token, error) {
	var toks []token
	r := []rune(s)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '\'':
			var sb strings.Builder
			i++
			for {
				if i >= len(r) {
					return nil, errors.New("unterminated string literal")
				}
				if r[i] == '\'' {
					if i+1 < len(r) && r[i+1] == '\'' {
						sb.WriteRune('\'')
						i += 2
						continue
					}
					i++
					break
				}
				sb.WriteRune(r[i])
				i++
			}
			toks = append(toks, token{tString, sb.String()})
		case unicode.IsDigit(c) || (c == '.' && i+1 < len(r) && unicode.IsDigit(r[i+1])):
			j, float := i, false
			for j < len(r) && (unicode.IsDigit(r[j]) || r[j] == '.' || r[j] == 'e' || r[j] == 'E' ||
				((r[j] == '+' || r[j] == '-') && (r[j-1] == 'e' || r[j-1] == 'E'))) {
				if r[j] == '.' || r[j] == 'e' || r[j] == 'E' {
					float = true
				}
				j++
			}
			lit := string(r[i:j])
			if j < len(r) && (r[j] == 'L' || r[j] == 'l' || r[j] == 'F' || r[j] == 'f' || r[j] == 'D' || r[j] == 'd') {
				float = float || r[j] != 'L' && r[j] != 'l'
				j++
			}
			kind := tInt
			if float {
				kind = tFloat
			}
			toks = append(toks, token{kind, lit})
			i = j
		case unicode.IsLetter(c) || c == '_' || c == '$':
			j := i
			for j < len(r) && (unicode.IsLetter(r[j]) || unicode.IsDigit(r[j]) || r[j] == '_' || r[j] == '$' || r[j] == '.') {
				j++
			}
			word := string(r[i:j])
			if selKeywords[strings.ToUpper(word)] {
				toks = append(toks, token{tKeyword, strings.ToUpper(word)})
			} else {
				toks = append(toks, token{tIdent, word})
			}
			i = j
		default:
			for _, op := range []string{"<>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "(", ")", ","} {
				if strings.HasPrefix(string(r[i:]), op) {
					toks = append(toks, token{tOp, op})
					i += len([]rune(op))
					goto next
				}
			}
			return nil, fmt.Errorf("unexpected character %q", c)
		next:
		}
	}
	return append(toks, token{kind: tEOF}), nil
}

type selParser struct {
	toks []token
	pos  int
}

func (p *selParser) peek() token { return p.toks[p.pos] }

func (p *selParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *selParser) accept(kind tokKind, text string) bool {
	if t := p.peek(); t.kind == kind && t.text == text {
		p.pos++
		return true
	}
	return false
}

func (p *selParser) or() (selExpr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.accept(tKeyword, "OR") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(env selEnv) any {
			x, y := a(env), b(env)
			if x == true || y == true {
				return true
			}
			if x == false && y == false {
				return false
			}
			return nil
		}
	}
	return l, nil
}

func (p *selParser) and() (selExpr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.accept(tKeyword, "AND") {
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(env selEnv) any {
			x, y := a(env), b(env)
			if x == false || y == false {
				return false
			}
			if x == true && y == true {
				return true
			}
			return nil
		}
	}
	return l, nil
}

func (p *selParser) not() (selExpr, error) {
	if p.accept(tKeyword, "NOT") {
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(env selEnv) any { return not3(e(env)) }, nil
	}
	return p.comparison()
}

func not3(v any) any {
	if b, ok := v.(bool); ok {
		return !b
	}
	return nil
}

func (p *selParser) comparison() (selExpr, error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tOp {
		switch t.text {
		case "=", "<>", "<", "<=", ">", ">=":
			p.next()
			r, err := p.additive()
			if err != nil {
				return nil, err
			}
			op := t.text
			return func(env selEnv) any { return compare(op, l(env), r(env)) }, nil
		}
	}
	negate := false
	if t.kind == tKeyword && t.text == "IS" {
		p.next()
		negate = p.accept(tKeyword, "NOT")
		if !p.accept(tKeyword, "NULL") {
			return nil, errors.New("IS must be followed by [NOT] NULL")
		}
		return func(env selEnv) any { return (l(env) == nil) != negate }, nil
	}
	if p.accept(tKeyword, "NOT") {
		negate = true
	}
	wrap := func(e selExpr) selExpr {
		if !negate {
			return e
		}
		return func(env selEnv) any { return not3(e(env)) }
	}
	switch {
	case p.accept(tKeyword, "BETWEEN"):
		lo, err := p.additive()
		if err != nil {
			return nil, err
		}
		if !p.accept(tKeyword, "AND") {
			return nil, errors.New("BETWEEN needs AND")
		}
		hi, err := p.additive()
		if err != nil {
			return nil, err
		}
		return wrap(func(env selEnv) any {
			v := l(env)
			a, b := compare(">=", v, lo(env)), compare("<=", v, hi(env))
			if a == false || b == false {
				return false
			}
			if a == true && b == true {
				return true
			}
			return nil
		}), nil
	case p.accept(tKeyword, "IN"):
		if !p.accept(tOp, "(") {
			return nil, errors.New("IN needs a parenthesised list")
		}
		var set []string
		for {
			s := p.next()
			if s.kind != tString {
				return nil, errors.New("IN lists hold string literals")
			}
			set = append(set, s.text)
			if p.accept(tOp, ")") {
				break
			}
			if !p.accept(tOp, ",") {
				return nil, errors.New("IN list needs commas")
			}
		}
		return wrap(func(env selEnv) any {
			s, ok := l(env).(string)
			if !ok {
				return nil
			}
			return slices.Contains(set, s)
		}), nil
	case p.accept(tKeyword, "LIKE"):
		pat := p.next()
		if pat.kind != tString {
			return nil, errors.New("LIKE needs a string pattern")
		}
		esc := ""
		if p.accept(tKeyword, "ESCAPE") {
			e := p.next()
			if e.kind != tString || len([]rune(e.text)) != 1 {
				return nil, errors.New("ESCAPE needs a one-character string")
			}
			esc = e.text
		}
		re, err := likeRegexp(pat.text, esc)
		if err != nil {
			return nil, err
		}
		return wrap(func(env selEnv) any {
			s, ok := l(env).(string)
			if !ok {
				return nil
			}
			return re.MatchString(s)
		}), nil
	}
	if negate {
		return nil, errors.New("NOT must be followed by BETWEEN, IN or LIKE here")
	}
	return l, nil
}

func likeRegexp(pat, esc string) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString("^")
	r := []rune(pat)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case esc != "" && string(c) == esc:
			if i+1 >= len(r) {
				return nil, errors.New("LIKE pattern ends with its escape character")
			}
			i++
			sb.WriteString(regexp.QuoteMeta(string(r[i])))
		case c == '%':
			sb.WriteString("(?s:.*)")
		case c == '_':
			sb.WriteString("(?s:.)")
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("$")
	return regexp.Compile(sb.String())
}

func (p *selParser) additive() (selExpr, error) {
	l, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOp || (t.text != "+" && t.text != "-") {
			return l, nil
		}
		p.next()
		r, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		a, b, op := l, r, t.text
		l = func(env selEnv) any { return arith(op, a(env), b(env)) }
	}
}

func (p *selParser) multiplicative() (selExpr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOp || (t.text != "*" && t.text != "/") {
			return l, nil
		}
		p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		a, b, op := l, r, t.text
		l = func(env selEnv) any { return arith(op, a(env), b(env)) }
	}
}

func (p *selParser) unary() (selExpr, error) {
	if p.accept(tOp, "-") {
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return func(env selEnv) any { return arith("-", int64(0), e(env)) }, nil
	}
	if p.accept(tOp, "+") {
		return p.unary()
	}
	return p.primary()
}

func (p *selParser) primary() (selExpr, error) {
	t := p.next()
	switch t.kind {
	case tIdent:
		name := t.text
		return func(env selEnv) any { return env(name) }, nil
	case tString:
		s := t.text
		return func(selEnv) any { return s }, nil
	case tInt:
		v, err := strconv.ParseInt(t.text, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", t.text)
		}
		return func(selEnv) any { return v }, nil
	case tFloat:
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", t.text)
		}
		return func(selEnv) any { return v }, nil
	case tKeyword:
		switch t.text {
		case "TRUE":
			return func(selEnv) any { return true }, nil
		case "FALSE":
			return func(selEnv) any { return false }, nil
		case "NULL":
			return func(selEnv) any { return nil }, nil
		}
	case tOp:
		if t.text == "(" {
			e, err := p.or()
			if err != nil {
				return nil, err
			}
			if !p.accept(tOp, ")") {
				return nil, errors.New("missing )")
			}
			return e, nil
		}
	case tEOF:
		return nil, errors.New("unexpected end of selector")
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// compare applies a comparison with SQL's three-valued logic: comparing
// unknown or mismatched types gives unknown (nil).
func compare(op string, a, b any) any {
	if a == nil || b == nil {
		return nil
	}
	if ai, ok := a.(int64); ok {
		if bi, ok := b.(int64); ok {
			return cmpResult(op, cmp.Compare(ai, bi))
		}
	}
	if af, ok := toFloat(a); ok {
		if bf, ok := toFloat(b); ok {
			return cmpResult(op, compareFloats(af, bf))
		}
		return nil
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		if !ok || (op != "=" && op != "<>") {
			return nil
		}
		return (x == y) == (op == "=")
	case bool:
		y, ok := b.(bool)
		if !ok || (op != "=" && op != "<>") {
			return nil
		}
		return (x == y) == (op == "=")
	}
	return nil
}

// compareFloats is cmp.Compare except for NaN, which it finds equal to every
// number (where cmp.Compare orders it first): the broker's behaviour since
// its first selector, kept until PubSub+'s is known.
func compareFloats(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpResult(op string, c int) any {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return nil
}

func arith(op string, a, b any) any {
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	if aInt && bInt {
		switch op {
		case "+":
			return ai + bi
		case "-":
			return ai - bi
		case "*":
			return ai * bi
		case "/":
			if bi == 0 {
				return nil
			}
			return ai / bi
		}
	}
	af, ok1 := toFloat(a)
	bf, ok2 := toFloat(b)
	if !ok1 || !ok2 {
		return nil
	}
	switch op {
	case "+":
		return af + bf
	case "-":
		return af - bf
	case "*":
		return af * bf
	case "/":
		return af / bf
	}
	return nil
}
