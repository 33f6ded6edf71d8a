package solacetest

// This file is the web console (Config.ConsoleAddr, devbroker
// --console-addr): HTML pages that show what the broker holds (VPNs,
// clients and their message rates, queues with their depths, flows and
// subscriptions, topic subscriptions per client, a queue's messages) and
// act on it (publish a test message, purge a queue, delete a message, apply
// a fault). The pages are html/template layouts; console/console.js fills
// them from the JSON endpoints under /api/ and polls them for live updates.
// Everything comes from the broker's Go API, which SEMP serves too: the
// console keeps no state of its own. It logs in as SEMP does (the SEMP user,
// basic auth, then a session cookie), and a request that changes state must
// be a POST carrying the X-Console-Request header from the console's own
// origin, which a cross-site form or link cannot send.

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"time"
)

//go:embed console
var consoleFiles embed.FS

var consoleTemplates = template.Must(template.ParseFS(consoleFiles, "console/*.html"))

const (
	// consoleCookieName names the console's session cookie; it differs
	// from SEMP's, whose listener shares the host.
	consoleCookieName = "consoleSession"
	// consoleRequestHeader must be on every state-changing request.
	consoleRequestHeader = "X-Console-Request"
	// consoleBrowseLimit bounds the messages one browse returns, and
	// consolePayloadLimit the payload bytes shown of each.
	consoleBrowseLimit  = 200
	consolePayloadLimit = 64 << 10
)

// console serves the web console of one broker.
type console struct {
	b    *Broker
	auth sessionAuth
	mux  *http.ServeMux
}

// newConsoleHandler returns the console's HTTP handler for b; user and
// password are the SEMP user's.
func newConsoleHandler(b *Broker, user, password string) http.Handler {
	c := &console{b: b, auth: newSessionAuth(user, password, consoleCookieName), mux: http.NewServeMux()}
	static, _ := fs.Sub(consoleFiles, "console")
	c.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	for path, page := range map[string]string{"/{$}": "overview", "/queues": "queues", "/topics": "topics", "/publish": "publish"} {
		c.mux.HandleFunc("GET "+path, c.page(page))
	}
	c.mux.HandleFunc("GET /vpns/{vpn}/queues/{queue}", c.page("queue"))
	c.mux.HandleFunc("GET /api/state", c.state)
	c.mux.HandleFunc("GET /api/vpns/{vpn}/queues/{queue}/msgs", c.browse)
	c.mux.HandleFunc("POST /api/publish", c.publish)
	c.mux.HandleFunc("POST /api/vpns/{vpn}/queues/{queue}/purge", c.purge)
	c.mux.HandleFunc("POST /api/vpns/{vpn}/queues/{queue}/msgs/{msg}/delete", c.deleteMsg)
	c.mux.HandleFunc("POST /api/faults", c.fault)
	return c
}

func (c *console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !c.auth.authenticate(w, r) {
		h.Set("WWW-Authenticate", `Basic realm="devbroker console"`)
		http.Error(w, "authentication required: log in as the SEMP user", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := sameOriginAction(r); err != nil {
			consoleError(w, http.StatusForbidden, err)
			return
		}
	}
	c.mux.ServeHTTP(w, r)
}

// sameOriginAction refuses a state-changing request that a page of another
// site could have sent: it must carry the console's header (a form cannot
// set one, and a cross-origin script would need a CORS preflight that the
// console never grants) and, when the browser names them, come from the
// console's own origin.
func sameOriginAction(r *http.Request) error {
	if r.Header.Get(consoleRequestHeader) == "" {
		return fmt.Errorf("a console action needs the %s header", consoleRequestHeader)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Errorf("a console action must come from the console's own pages, not %s", site)
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host && origin != "https://"+r.Host {
		return fmt.Errorf("a console action must come from the console's own origin, not %s", origin)
	}
	return nil
}

// consolePage is what a page's template gets.
type consolePage struct {
	Page, VPN, Queue string
	VPNs             []string
}

func (c *console) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := consolePage{Page: name, VPN: r.PathValue("vpn"), Queue: r.PathValue("queue"), VPNs: c.b.VPNs()}
		if name == "queue" {
			if _, _, err := c.b.Queue(p.VPN, p.Queue); err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := consoleTemplates.ExecuteTemplate(w, name+".html", p); err != nil {
			c.b.log.Warn("console: rendering a page", "page", name, "error", err)
		}
	}
}

// consoleState is /api/state: everything the overview, queues and topics
// pages show.
type consoleState struct {
	Time   int64 `json:"time"` // unix milliseconds, for rates
	Faults FaultState
	VPNs   []consoleVPN
}

type consoleVPN struct {
	Name    string
	Enabled bool
	Clients []ClientInfo
	Queues  []consoleQueue
}

type consoleQueue struct {
	QueueConfig
	Stats QueueStats
	Flows []FlowInfo
}

func (c *console) state(w http.ResponseWriter, _ *http.Request) {
	st := consoleState{Time: time.Now().UnixMilli(), Faults: c.b.Faults().State()}
	for _, name := range c.b.VPNs() {
		v := consoleVPN{Name: name}
		cfg, err := c.b.VPN(name)
		if err != nil {
			continue // deleted meanwhile
		}
		v.Enabled = cfg.Enabled
		v.Clients, _ = c.b.Clients(name)
		queues, _ := c.b.Queues(name)
		for _, q := range queues {
			_, stats, err := c.b.Queue(name, q.Name)
			if err != nil {
				continue
			}
			flows, _ := c.b.QueueFlows(name, q.Name)
			v.Queues = append(v.Queues, consoleQueue{QueueConfig: q, Stats: stats, Flows: flows})
		}
		st.VPNs = append(st.VPNs, v)
	}
	consoleJSON(w, st)
}

// consoleMsg is a browsed message: MsgContent with the payload cut to
// consolePayloadLimit bytes.
type consoleMsg struct {
	MsgContent
	SpooledAtMs    int64
	PayloadSize    int
	PayloadClipped bool
}

func (c *console) browse(w http.ResponseWriter, r *http.Request) {
	msgs, err := c.b.BrowseQueue(r.PathValue("vpn"), r.PathValue("queue"))
	if err != nil {
		consoleError(w, http.StatusNotFound, err)
		return
	}
	out := struct {
		Total int
		Msgs  []consoleMsg
	}{Total: len(msgs), Msgs: []consoleMsg{}}
	for _, m := range msgs[:min(len(msgs), consoleBrowseLimit)] {
		cm := consoleMsg{MsgContent: m, SpooledAtMs: m.SpooledAt.UnixMilli(), PayloadSize: len(m.Payload)}
		if len(m.Payload) > consolePayloadLimit {
			cm.Payload, cm.PayloadClipped = m.Payload[:consolePayloadLimit], true
		}
		out.Msgs = append(out.Msgs, cm)
	}
	consoleJSON(w, out)
}

// consolePublish is the publish form's request.
type consolePublish struct {
	VPN                    string            `json:"vpn"`
	DestinationType        string            `json:"destinationType"` // "topic" or "queue"
	Destination            string            `json:"destination"`
	Payload                string            `json:"payload"`
	Persistent             bool              `json:"persistent"`
	Priority               int               `json:"priority"`
	TTLMs                  int64             `json:"ttlMs"`
	DMQEligible            bool              `json:"dmqEligible"`
	CorrelationID          string            `json:"correlationId"`
	ApplicationMessageID   string            `json:"applicationMessageId"`
	ApplicationMessageType string            `json:"applicationMessageType"`
	UserProperties         map[string]string `json:"userProperties"`
}

func (c *console) publish(w http.ResponseWriter, r *http.Request) {
	var req consolePublish
	if err := json.NewDecoder(io.LimitReader(r.Body, maxSEMPBody)).Decode(&req); err != nil {
		consoleError(w, http.StatusBadRequest, fmt.Errorf("publish: reading the request: %w", err))
		return
	}
	m := Message{Payload: []byte(req.Payload), Persistent: req.Persistent, Priority: req.Priority,
		TTL: time.Duration(req.TTLMs) * time.Millisecond, DMQEligible: req.DMQEligible,
		CorrelationID: req.CorrelationID, ApplicationMessageID: req.ApplicationMessageID,
		ApplicationMessageType: req.ApplicationMessageType, UserProperties: req.UserProperties}
	switch req.DestinationType {
	case "topic":
		m.Topic = req.Destination
	case "queue":
		m.Queue = req.Destination
	default:
		consoleError(w, http.StatusBadRequest, fmt.Errorf("publish: destinationType %q: want topic or queue", req.DestinationType))
		return
	}
	n, err := c.b.Publish(req.VPN, m)
	if err != nil {
		consoleError(w, http.StatusBadRequest, err)
		return
	}
	c.b.log.Info("console: published a test message", "vpn", req.VPN, req.DestinationType, req.Destination, "queues", n)
	consoleJSON(w, map[string]int{"queues": n})
}

func (c *console) purge(w http.ResponseWriter, r *http.Request) {
	n, err := c.b.PurgeQueue(r.PathValue("vpn"), r.PathValue("queue"))
	if err != nil {
		consoleError(w, http.StatusNotFound, err)
		return
	}
	consoleJSON(w, map[string]int{"deleted": n})
}

func (c *console) deleteMsg(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.PathValue("msg"), 10, 64)
	if err == nil {
		err = c.b.DeleteQueueMsg(r.PathValue("vpn"), r.PathValue("queue"), id)
	}
	if err != nil {
		consoleError(w, http.StatusNotFound, err)
		return
	}
	consoleJSON(w, map[string]int{"deleted": 1})
}

// consoleFaults are the faults the console applies, by the name its
// buttons send; arg is the form's number (seconds or a count).
var consoleFaults = map[string]func(f Faults, arg int){
	"pause-delivery":         func(f Faults, _ int) { f.PauseDelivery() },
	"resume-delivery":        func(f Faults, _ int) { f.ResumeDelivery() },
	"drop-connections":       func(f Faults, _ int) { f.DropConnections() },
	"refuse-logins":          func(f Faults, s int) { f.RefuseLogins(time.Duration(s) * time.Second) },
	"nack-next-publishes":    func(f Faults, n int) { f.NackNextPublishes(n, "") },
	"ignore-consumer-window": func(f Faults, _ int) { f.IgnoreConsumerWindows(true) },
	"honour-consumer-window": func(f Faults, _ int) { f.IgnoreConsumerWindows(false) },
}

func (c *console) fault(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Fault string `json:"fault"`
		Arg   int    `json:"arg"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxSEMPBody)).Decode(&req); err != nil {
		consoleError(w, http.StatusBadRequest, fmt.Errorf("fault: reading the request: %w", err))
		return
	}
	apply, ok := consoleFaults[req.Fault]
	if !ok {
		consoleError(w, http.StatusBadRequest, fmt.Errorf("fault %q: unknown", req.Fault))
		return
	}
	if req.Arg < 0 {
		consoleError(w, http.StatusBadRequest, errors.New("fault: arg must not be negative"))
		return
	}
	c.b.log.Info("console: applying a fault", "fault", req.Fault, "arg", req.Arg)
	apply(c.b.Faults(), req.Arg)
	consoleJSON(w, c.b.Faults().State())
}

func consoleJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func consoleError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
