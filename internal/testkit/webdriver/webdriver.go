// Package webdriver is a small W3C WebDriver client for browser tests: it
// drives Debian's headless Chromium through the chromedriver that
// .ci/setup.d/40-chromium.sh starts, speaking the standard's JSON over HTTP
// (https://www.w3.org/TR/webdriver2/). It has what the console's browser
// test needs: navigate, find elements by CSS selector, read their text,
// click, type, run a script, take a screenshot, and wait for the page with
// a deadline rather than a sleep.
//
// The package imports testing and testify, so only _test.go files may import
// it: TestBinaryLinksNoTestCode in tests/ keeps it out of the binary.
package webdriver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SetupHint says how to start chromedriver.
const SetupHint = "run `bash -c 'source .ci/setup.d/40-chromium.sh'` from the repository root to install Chromium and start chromedriver on 127.0.0.1:9515"

// elementKey is the W3C name of an element reference in JSON.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// DefaultWait is how long Wait polls before it fails the test.
const DefaultWait = 10 * time.Second

// Session is one browser session. Its methods fail the test on an error.
type Session struct {
	t    testing.TB
	base string // .../session/{id}
	hc   *http.Client
}

// Element is an element of the page.
type Element struct {
	s  *Session
	id string
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// NewSession starts a headless Chromium through chromedriver
// (CHROMEDRIVER_URL, default http://127.0.0.1:9515; the browser binary
// CHROMIUM_BIN, default /usr/bin/chromium) with a window of width x height,
// and ends it when the test ends. It fails, never skips, when chromedriver
// is not there, saying how to start it. Alert and confirm dialogs are
// accepted.
func NewSession(t testing.TB, width, height int) *Session {
	t.Helper()
	driver := strings.TrimSuffix(env("CHROMEDRIVER_URL", "http://127.0.0.1:9515"), "/")
	hc := &http.Client{Timeout: 60 * time.Second}
	resp, err := hc.Get(driver + "/status")
	if err != nil {
		t.Fatalf("chromedriver is not reachable at %s (%v): %s", driver, err, SetupHint)
	}
	_ = resp.Body.Close()
	args := []string{"--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		fmt.Sprintf("--window-size=%d,%d", width, height)}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":             "chrome",
		"unhandledPromptBehavior": "accept",
		"goog:chromeOptions":      map[string]any{"binary": env("CHROMIUM_BIN", "/usr/bin/chromium"), "args": args},
	}}}
	s := &Session{t: t, base: driver, hc: hc}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	s.call("POST", "/session", caps, &created)
	require.NotEmpty(t, created.SessionID, "chromedriver made no session")
	s.base = driver + "/session/" + created.SessionID
	t.Cleanup(func() { s.call("DELETE", "", nil, nil) })
	return s
}

// call sends one command and decodes its "value" into out (when not nil).
func (s *Session) call(method, path string, body, out any) {
	s.t.Helper()
	if err := s.try(method, path, body, out); err != nil {
		s.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
}

// try is call returning the error, for commands a wait may repeat.
func (s *Session) try(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("status %d, undecodable answer: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		_ = json.Unmarshal(env.Value, &e)
		return fmt.Errorf("%s: %s", e.Error, e.Message)
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

// Navigate opens url and returns once the page has loaded.
func (s *Session) Navigate(url string) {
	s.t.Helper()
	s.call("POST", "/url", map[string]string{"url": url}, nil)
}

// FindAll returns the elements matching a CSS selector, maybe none.
func (s *Session) FindAll(css string) []Element {
	s.t.Helper()
	els, err := s.findAll(css)
	require.NoError(s.t, err)
	return els
}

func (s *Session) findAll(css string) ([]Element, error) {
	var refs []map[string]string
	if err := s.try("POST", "/elements", map[string]string{"using": "css selector", "value": css}, &refs); err != nil {
		return nil, err
	}
	els := make([]Element, len(refs))
	for i, r := range refs {
		els[i] = Element{s: s, id: r[elementKey]}
	}
	return els, nil
}

// Find waits for the first element matching a CSS selector.
func (s *Session) Find(css string) Element {
	s.t.Helper()
	var el Element
	s.waitFirst("an element "+css, css, func(e Element) bool { el = e; return true })
	return el
}

// waitFirst waits until there is an element matching css and f of the
// first one holds.
func (s *Session) waitFirst(what, css string, f func(Element) bool) {
	s.t.Helper()
	s.Wait(what, func() bool {
		els, err := s.findAll(css)
		return err == nil && len(els) > 0 && f(els[0])
	})
}

// Click clicks the first element matching css once it is there. A page
// that redraws itself may replace the element between finding and clicking
// it; Click then finds it again.
func (s *Session) Click(css string) {
	s.t.Helper()
	s.waitFirst("to click "+css, css, func(e Element) bool {
		return s.try("POST", "/element/"+e.id+"/click", map[string]any{}, nil) == nil
	})
}

// Wait polls cond until it holds, failing the test after DefaultWait: the
// page updates itself, so tests wait for what they expect to see.
func (s *Session) Wait(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(DefaultWait)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("webdriver: waited %v for %s", DefaultWait, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// WaitText waits until the text of the first element matching css
// satisfies ok, and returns that text.
func (s *Session) WaitText(css string, ok func(string) bool) string {
	s.t.Helper()
	var text string
	s.waitFirst("the text of "+css, css, func(e Element) bool {
		t, err := e.text()
		text = t
		return err == nil && ok(t)
	})
	return text
}

// Exec runs a script in the page (its body, with arguments) and decodes
// what it returns into out (when not nil).
func (s *Session) Exec(script string, out any, args ...any) {
	s.t.Helper()
	if args == nil {
		args = []any{}
	}
	s.call("POST", "/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// Screenshot returns a PNG of the window.
func (s *Session) Screenshot() []byte {
	s.t.Helper()
	var b64 string
	s.call("GET", "/screenshot", nil, &b64)
	png, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(s.t, err)
	return png
}

// Text is the element's rendered text.
func (e Element) Text() string {
	e.s.t.Helper()
	t, err := e.text()
	require.NoError(e.s.t, err)
	return t
}

func (e Element) text() (string, error) {
	var t string
	err := e.s.try("GET", "/element/"+e.id+"/text", nil, &t)
	return t, err
}

// Property is a DOM property of the element (value, checked, ...).
func (e Element) Property(name string) any {
	e.s.t.Helper()
	var v any
	e.s.call("GET", "/element/"+e.id+"/property/"+name, nil, &v)
	return v
}

// Attribute is an attribute of the element, "" when it has none.
func (e Element) Attribute(name string) string {
	e.s.t.Helper()
	var v *string
	e.s.call("GET", "/element/"+e.id+"/attribute/"+name, nil, &v)
	if v == nil {
		return ""
	}
	return *v
}

// Find returns the first element below e matching css, failing the test
// when there is none.
func (e Element) Find(css string) Element {
	e.s.t.Helper()
	var ref map[string]string
	e.s.call("POST", "/element/"+e.id+"/element", map[string]string{"using": "css selector", "value": css}, &ref)
	return Element{s: e.s, id: ref[elementKey]}
}

// Click clicks the element.
func (e Element) Click() {
	e.s.t.Helper()
	e.s.call("POST", "/element/"+e.id+"/click", map[string]any{}, nil)
}

// Clear empties an input or text area.
func (e Element) Clear() {
	e.s.t.Helper()
	e.s.call("POST", "/element/"+e.id+"/clear", map[string]any{}, nil)
}

// Type types text into the element.
func (e Element) Type(text string) {
	e.s.t.Helper()
	e.s.call("POST", "/element/"+e.id+"/value", map[string]string{"text": text}, nil)
}
