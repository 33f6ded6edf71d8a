// Package selector is the JMS message-selector language (a subset of SQL-92
// conditional expressions: comparisons, AND/OR/NOT with SQL's three-valued
// logic, arithmetic, BETWEEN, IN, LIKE with ESCAPE, IS NULL) over the values
// an Env gives for identifiers. solacetest evaluates consumer-flow selectors
// with it, the ones the Solace Go client passes to the broker when a
// receiver is built WithMessageSelector. It is pure: no I/O, no state.
package selector

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Selector is a compiled message selector.
type Selector struct {
	root expr
}

// expr evaluates to nil (unknown), bool, int64, float64 or string.
type expr func(Env) any

// Env resolves a selector's identifiers for one message: a JMS header name
// or a user property to its value (nil, bool, int64, float64 or string), nil
// when the message has none.
type Env func(name string) any

// Eval evaluates the selector for the message env describes: nil (unknown),
// bool, int64, float64 or string.
func (s *Selector) Eval(env Env) any { return s.root(env) }

// Matches reports whether the message env describes is selected: the
// selector is TRUE for it (FALSE and unknown do not select). A nil selector
// selects every message.
func (s *Selector) Matches(env Env) bool {
	if s == nil {
		return true
	}
	v, _ := s.root(env).(bool)
	return v
}

// Compile parses a JMS message selector.
func Compile(text string) (*Selector, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tEOF {
		return nil, fmt.Errorf("unexpected %q", p.peek().text)
	}
	return &Selector{root: e}, nil
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

var keywords = map[string]bool{"AND": true, "OR": true, "NOT": true, "BETWEEN": true, "LIKE": true,
	"IN": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true, "ESCAPE": true}

func lex(s string) ([]token, error) {
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
			if keywords[strings.ToUpper(word)] {
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

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) accept(kind tokKind, text string) bool {
	if t := p.peek(); t.kind == kind && t.text == text {
		p.pos++
		return true
	}
	return false
}

// leftAssoc parses operand {op operand}, left-associative, for the
// operators isOp accepts, joining each pair with join.
func (p *parser) leftAssoc(operand func() (expr, error), isOp func(token) bool, join func(op string, a, b expr) expr) (expr, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for isOp(p.peek()) {
		op := p.next().text
		r, err := operand()
		if err != nil {
			return nil, err
		}
		l = join(op, l, r)
	}
	return l, nil
}

func isKeyword(k string) func(token) bool {
	return func(t token) bool { return t.kind == tKeyword && t.text == k }
}

func isOp(a, b string) func(token) bool {
	return func(t token) bool { return t.kind == tOp && (t.text == a || t.text == b) }
}

// logic joins two operands by SQL's three-valued OR (dominant true) or AND
// (dominant false): dominant when either side is, the other truth value when
// both sides are, unknown otherwise.
func logic(dominant bool) func(string, expr, expr) expr {
	return func(_ string, a, b expr) expr {
		return func(env Env) any {
			x, y := a(env), b(env)
			if x == dominant || y == dominant {
				return dominant
			}
			if x == !dominant && y == !dominant {
				return !dominant
			}
			return nil
		}
	}
}

func arithmetic(op string, a, b expr) expr {
	return func(env Env) any { return arith(op, a(env), b(env)) }
}

func (p *parser) or() (expr, error) { return p.leftAssoc(p.and, isKeyword("OR"), logic(true)) }

func (p *parser) and() (expr, error) { return p.leftAssoc(p.not, isKeyword("AND"), logic(false)) }

func (p *parser) not() (expr, error) {
	if p.accept(tKeyword, "NOT") {
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(env Env) any { return not3(e(env)) }, nil
	}
	return p.comparison()
}

func not3(v any) any {
	if b, ok := v.(bool); ok {
		return !b
	}
	return nil
}

func (p *parser) comparison() (expr, error) {
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
			return func(env Env) any { return compare(op, l(env), r(env)) }, nil
		}
	}
	negate := false
	if t.kind == tKeyword && t.text == "IS" {
		p.next()
		negate = p.accept(tKeyword, "NOT")
		if !p.accept(tKeyword, "NULL") {
			return nil, errors.New("IS must be followed by [NOT] NULL")
		}
		return func(env Env) any { return (l(env) == nil) != negate }, nil
	}
	if p.accept(tKeyword, "NOT") {
		negate = true
	}
	wrap := func(e expr) expr {
		if !negate {
			return e
		}
		return func(env Env) any { return not3(e(env)) }
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
		return wrap(func(env Env) any {
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
		return wrap(func(env Env) any {
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
		return wrap(func(env Env) any {
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

func (p *parser) additive() (expr, error) {
	return p.leftAssoc(p.multiplicative, isOp("+", "-"), arithmetic)
}

func (p *parser) multiplicative() (expr, error) {
	return p.leftAssoc(p.unary, isOp("*", "/"), arithmetic)
}

func (p *parser) unary() (expr, error) {
	if p.accept(tOp, "-") {
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return func(env Env) any { return arith("-", int64(0), e(env)) }, nil
	}
	if p.accept(tOp, "+") {
		return p.unary()
	}
	return p.primary()
}

func (p *parser) primary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tIdent:
		name := t.text
		return func(env Env) any { return env(name) }, nil
	case tString:
		s := t.text
		return func(Env) any { return s }, nil
	case tInt:
		v, err := strconv.ParseInt(t.text, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", t.text)
		}
		return func(Env) any { return v }, nil
	case tFloat:
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", t.text)
		}
		return func(Env) any { return v }, nil
	case tKeyword:
		switch t.text {
		case "TRUE":
			return func(Env) any { return true }, nil
		case "FALSE":
			return func(Env) any { return false }, nil
		case "NULL":
			return func(Env) any { return nil }, nil
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
