package solacetest

// This file is the SEMP layer: the broker's SEMPv2 HTTP endpoints for queues,
// their topic subscriptions and the monitor view of a queue. Paths, bodies,
// envelopes and field names follow the SEMPv2 OpenAPI specs (API 2.34);
// sempspec_test.go checks every response against them.

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// queueAdmin is what the SEMP handler needs from the broker; *Broker
// implements it. Tests use an in-memory fake.
type queueAdmin interface {
	HasVPN(vpn string) bool
	CreateQueue(vpn string, cfg QueueConfig) error                 // ErrQueueExists, ErrUnknownVPN
	UpdateQueue(vpn, name string, update func(*QueueConfig)) error // ErrUnknownQueue
	DeleteQueue(vpn, name string) error                            // ErrUnknownQueue
	Queue(vpn, name string) (QueueConfig, QueueStats, error)       // ErrUnknownQueue
	Queues(vpn string) ([]QueueConfig, error)
	AddQueueSubscription(vpn, queue, topic string) error    // ErrSubscriptionExists
	RemoveQueueSubscription(vpn, queue, topic string) error // ErrUnknownSubscription
}

const (
	sempConfigBase  = "/SEMP/v2/config"
	sempMonitorBase = "/SEMP/v2/monitor"

	// sempCookieName names the session cookie. Clients treat it as opaque.
	sempCookieName = "sempSession"
	// sempSessionIdle is how long an unused session stays valid.
	sempSessionIdle = 15 * time.Minute
	// sempMaxSessions bounds the session table against clients that never
	// present their cookie; the least recently used session goes first.
	sempMaxSessions = 256

	sempDefaultCount = 10  // SEMP's default page size
	sempMaxCount     = 100 // our per-collection maximum
	maxSEMPBody      = 1 << 20

	// sempDefaultDMQ and sempDefaultSpoolMB are SEMP's defaults for a queue
	// created without them.
	sempDefaultDMQ     = "#DEAD_MSG_QUEUE"
	sempDefaultSpoolMB = 5000
)

// SEMP error codes (meta.error.code) and status strings. NOT_FOUND (6) and
// ALREADY_EXISTS (10) are what real brokers send; the others are this
// broker's choice for conditions it must report somehow.
const (
	sempCodeNotFound         = 6
	sempCodeAlreadyExists    = 10
	sempCodeInvalidParameter = 11
	sempCodeNotSupported     = 14
	sempCodeUnauthorized     = 8

	sempStatusNotFound         = "NOT_FOUND"
	sempStatusAlreadyExists    = "ALREADY_EXISTS"
	sempStatusInvalidParameter = "INVALID_PARAMETER"
	sempStatusNotSupported     = "NOT_SUPPORTED"
	sempStatusUnauthorized     = "UNAUTHORIZED"
)

// sempServer serves SEMPv2.
type sempServer struct {
	admin          queueAdmin
	user, password string
	log            *slog.Logger
	now            func() time.Time // tests move the clock

	mu       sync.Mutex
	sessions map[string]time.Time // token -> expiry
}

// newSEMPHandler returns the SEMP HTTP handler for admin. Requests need HTTP
// basic auth with user/password or a session cookie issued by an earlier
// authenticated request.
func newSEMPHandler(admin queueAdmin, user, password string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &sempServer{
		admin: admin, user: user, password: password, log: log,
		now: time.Now, sessions: map[string]time.Time{},
	}
}

// sempErr is a SEMP error response.
type sempErr struct {
	httpStatus int
	code       int
	status     string
	desc       string
}

func (e *sempErr) Error() string { return e.status + ": " + e.desc }

func errInvalid(format string, args ...any) *sempErr {
	return &sempErr{http.StatusBadRequest, sempCodeInvalidParameter, sempStatusInvalidParameter, fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) *sempErr {
	return &sempErr{http.StatusNotFound, sempCodeNotFound, sempStatusNotFound, fmt.Sprintf(format, args...)}
}

func errNotSupported(format string, args ...any) *sempErr {
	return &sempErr{http.StatusBadRequest, sempCodeNotSupported, sempStatusNotSupported, fmt.Sprintf(format, args...)}
}

// adminErr maps a queueAdmin error to SEMP's codes.
func adminErr(err error) *sempErr {
	switch {
	case errors.Is(err, ErrQueueExists), errors.Is(err, ErrSubscriptionExists):
		return &sempErr{http.StatusBadRequest, sempCodeAlreadyExists, sempStatusAlreadyExists, err.Error()}
	case errors.Is(err, ErrUnknownQueue), errors.Is(err, ErrUnknownVPN), errors.Is(err, ErrUnknownSubscription):
		return errNotFound("%s", err.Error())
	default:
		return errInvalid("%s", err.Error())
	}
}

// sempCall is one request being served.
type sempCall struct {
	w    http.ResponseWriter
	r    *http.Request
	api  string   // sempConfigBase or sempMonitorBase
	segs []string // decoded path segments below api
	// sel is the parsed select query parameter.
	sel *sempSelect
	// status is what was answered, for the log.
	status int
}

func (s *sempServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &sempCall{w: w, r: r}
	defer func() {
		s.log.Debug("semp request", "method", r.Method, "path", r.URL.Path, "status", c.status)
	}()
	if !s.authenticate(w, r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="SEMP"`)
		c.fail(&sempErr{http.StatusUnauthorized, sempCodeUnauthorized, sempStatusUnauthorized,
			"authentication required: send HTTP basic auth or a valid session cookie"})
		return
	}
	if err := c.parse(); err != nil {
		c.fail(err)
		return
	}
	if err := s.route(c); err != nil {
		c.fail(err)
	}
}

// parse splits the escaped path so that %2F inside a queue name or topic
// stays part of its segment, and reads the common query parameters.
func (c *sempCall) parse() *sempErr {
	p := c.r.URL.EscapedPath()
	for _, base := range []string{sempConfigBase, sempMonitorBase} {
		if rest, ok := strings.CutPrefix(p, base+"/"); ok {
			c.api = base
			p = strings.TrimSuffix(rest, "/")
			break
		}
	}
	if c.api == "" {
		return errNotFound("unknown resource %q", c.r.URL.Path)
	}
	for _, raw := range strings.Split(p, "/") {
		seg, err := url.PathUnescape(raw)
		if err != nil || seg == "" {
			return errNotFound("unknown resource %q", c.r.URL.Path)
		}
		c.segs = append(c.segs, seg)
	}
	q := c.r.URL.Query()
	if w := q.Get("where"); w != "" {
		return errNotSupported("the test broker does not implement the where query parameter")
	}
	if sel := q.Get("select"); sel != "" {
		var err *sempErr
		if c.sel, err = parseSelect(sel); err != nil {
			return err
		}
	}
	return nil
}

// route dispatches on the path shape and method.
func (s *sempServer) route(c *sempCall) *sempErr {
	segs := c.segs
	if len(segs) < 3 || segs[0] != "msgVpns" || segs[2] != "queues" || len(segs) > 6 ||
		(len(segs) >= 5 && segs[4] != "subscriptions") {
		return errNotFound("unknown resource %q", c.r.URL.Path)
	}
	vpn := segs[1]
	if !s.admin.HasVPN(vpn) {
		return errNotFound("could not find match for msgVpn %q", vpn)
	}
	monitor := c.api == sempMonitorBase
	allowed := func(methods ...string) *sempErr {
		c.w.Header().Set("Allow", strings.Join(methods, ", "))
		return &sempErr{http.StatusMethodNotAllowed, sempCodeNotSupported, sempStatusNotSupported,
			fmt.Sprintf("method %s is not allowed on %s", c.r.Method, c.r.URL.Path)}
	}
	switch len(segs) {
	case 3:
		switch {
		case c.r.Method == http.MethodGet:
			return s.listQueues(c, vpn)
		case c.r.Method == http.MethodPost && !monitor:
			return s.createQueue(c, vpn)
		case monitor:
			return allowed(http.MethodGet)
		default:
			return allowed(http.MethodGet, http.MethodPost)
		}
	case 4:
		name := segs[3]
		switch {
		case c.r.Method == http.MethodGet:
			return s.getQueue(c, vpn, name)
		case monitor:
			return allowed(http.MethodGet)
		case c.r.Method == http.MethodPatch:
			return s.updateQueue(c, vpn, name, false)
		case c.r.Method == http.MethodPut:
			return s.updateQueue(c, vpn, name, true)
		case c.r.Method == http.MethodDelete:
			return s.deleteQueue(c, vpn, name)
		default:
			return allowed(http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete)
		}
	case 5:
		switch {
		case c.r.Method == http.MethodGet:
			return s.listSubscriptions(c, vpn, segs[3])
		case c.r.Method == http.MethodPost && !monitor:
			return s.addSubscription(c, vpn, segs[3])
		case monitor:
			return allowed(http.MethodGet)
		default:
			return allowed(http.MethodGet, http.MethodPost)
		}
	default: // 6
		switch {
		case monitor:
			return errNotFound("unknown resource %q", c.r.URL.Path)
		case c.r.Method == http.MethodGet:
			return s.getSubscription(c, vpn, segs[3], segs[5])
		case c.r.Method == http.MethodDelete:
			return s.removeSubscription(c, vpn, segs[3], segs[5])
		default:
			return allowed(http.MethodGet, http.MethodDelete)
		}
	}
}

// --- authentication ---

// authenticate accepts valid basic auth (issuing a session cookie when the
// request carries no live one) or a live session cookie alone. Wrong basic
// credentials fail even with a live cookie.
func (s *sempServer) authenticate(w http.ResponseWriter, r *http.Request) bool {
	now := s.now()
	token := ""
	if ck, err := r.Cookie(sempCookieName); err == nil {
		token = ck.Value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	live := false
	if exp, ok := s.sessions[token]; ok && token != "" {
		if now.Before(exp) {
			live = true
		} else {
			delete(s.sessions, token)
		}
	}
	if u, p, ok := r.BasicAuth(); ok {
		userOK := subtle.ConstantTimeCompare([]byte(u), []byte(s.user)) == 1
		passOK := subtle.ConstantTimeCompare([]byte(p), []byte(s.password)) == 1
		if !userOK || !passOK {
			return false
		}
		if !live {
			token = s.newSessionLocked(now)
			http.SetCookie(w, &http.Cookie{Name: sempCookieName, Value: token, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode})
		}
	} else if !live {
		return false
	}
	s.sessions[token] = now.Add(sempSessionIdle)
	return true
}

func (s *sempServer) newSessionLocked(now time.Time) string {
	for tok, exp := range s.sessions {
		if !now.Before(exp) {
			delete(s.sessions, tok)
		}
	}
	for len(s.sessions) >= sempMaxSessions {
		oldest, oldestExp := "", time.Time{}
		for tok, exp := range s.sessions {
			if oldest == "" || exp.Before(oldestExp) {
				oldest, oldestExp = tok, exp
			}
		}
		delete(s.sessions, oldest)
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sessionCount reports live sessions, for tests.
func (s *sempServer) sessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// --- wire types ---

// sempEventThreshold is SEMP's EventThreshold.
type sempEventThreshold struct {
	ClearPercent int64 `json:"clearPercent"`
	SetPercent   int64 `json:"setPercent"`
}

// sempConfigQueue is the config API's MsgVpnQueue as this broker returns it.
// Attributes the broker does not model are reported at SEMP's defaults, and
// a request may only set them to those defaults.
type sempConfigQueue struct {
	AccessType                              string             `json:"accessType"`
	ConsumerAckPropagationEnabled           bool               `json:"consumerAckPropagationEnabled"`
	DeadMsgQueue                            string             `json:"deadMsgQueue"`
	DeliveryCountEnabled                    bool               `json:"deliveryCountEnabled"`
	DeliveryDelay                           int64              `json:"deliveryDelay"`
	EgressEnabled                           bool               `json:"egressEnabled"`
	EventBindCountThreshold                 sempEventThreshold `json:"eventBindCountThreshold"`
	EventMsgSpoolUsageThreshold             sempEventThreshold `json:"eventMsgSpoolUsageThreshold"`
	EventRejectLowPriorityMsgLimitThreshold sempEventThreshold `json:"eventRejectLowPriorityMsgLimitThreshold"`
	IngressEnabled                          bool               `json:"ingressEnabled"`
	MaxBindCount                            int64              `json:"maxBindCount"`
	MaxDeliveredUnackedMsgsPerFlow          int64              `json:"maxDeliveredUnackedMsgsPerFlow"`
	MaxMsgSize                              int32              `json:"maxMsgSize"`
	MaxMsgSpoolUsage                        int64              `json:"maxMsgSpoolUsage"`
	MaxRedeliveryCount                      int64              `json:"maxRedeliveryCount"`
	MaxTTL                                  int64              `json:"maxTtl"`
	MsgVpnName                              string             `json:"msgVpnName"`
	Owner                                   string             `json:"owner"`
	PartitionCount                          int32              `json:"partitionCount"`
	PartitionRebalanceDelay                 int64              `json:"partitionRebalanceDelay"`
	PartitionRebalanceMaxHandoffTime        int64              `json:"partitionRebalanceMaxHandoffTime"`
	Permission                              string             `json:"permission"`
	QueueName                               string             `json:"queueName"`
	RedeliveryDelayEnabled                  bool               `json:"redeliveryDelayEnabled"`
	RedeliveryDelayInitialInterval          int32              `json:"redeliveryDelayInitialInterval"`
	RedeliveryDelayMaxInterval              int32              `json:"redeliveryDelayMaxInterval"`
	RedeliveryDelayMultiplier               int32              `json:"redeliveryDelayMultiplier"`
	RedeliveryEnabled                       bool               `json:"redeliveryEnabled"`
	RejectLowPriorityMsgEnabled             bool               `json:"rejectLowPriorityMsgEnabled"`
	RejectLowPriorityMsgLimit               int64              `json:"rejectLowPriorityMsgLimit"`
	RejectMsgToSenderOnDiscardBehavior      string             `json:"rejectMsgToSenderOnDiscardBehavior"`
	RespectMsgPriorityEnabled               bool               `json:"respectMsgPriorityEnabled"`
	RespectTTLEnabled                       bool               `json:"respectTtlEnabled"`
}

// sempQueueDefaults is a queue with SEMP's default for every attribute.
func sempQueueDefaults() sempConfigQueue {
	return sempConfigQueue{
		AccessType:                              string(AccessExclusive),
		ConsumerAckPropagationEnabled:           true,
		DeadMsgQueue:                            sempDefaultDMQ,
		EventBindCountThreshold:                 sempEventThreshold{ClearPercent: 60, SetPercent: 80},
		EventMsgSpoolUsageThreshold:             sempEventThreshold{ClearPercent: 18, SetPercent: 25},
		EventRejectLowPriorityMsgLimitThreshold: sempEventThreshold{ClearPercent: 60, SetPercent: 80},
		MaxBindCount:                            1000,
		MaxDeliveredUnackedMsgsPerFlow:          10000,
		MaxMsgSize:                              10000000,
		MaxMsgSpoolUsage:                        sempDefaultSpoolMB,
		PartitionRebalanceDelay:                 5,
		PartitionRebalanceMaxHandoffTime:        3,
		Permission:                              "no-access",
		RedeliveryDelayInitialInterval:          1000,
		RedeliveryDelayMaxInterval:              64000,
		RedeliveryDelayMultiplier:               200,
		RedeliveryEnabled:                       true,
		RejectMsgToSenderOnDiscardBehavior:      "when-queue-enabled",
	}
}

func configQueueJSON(vpn string, cfg QueueConfig) sempConfigQueue {
	q := sempQueueDefaults()
	q.QueueName, q.MsgVpnName = cfg.Name, vpn
	q.AccessType = string(cfg.AccessType)
	if q.AccessType == "" {
		q.AccessType = string(AccessExclusive)
	}
	q.DeadMsgQueue = cfg.DeadMsgQueue
	q.EgressEnabled, q.IngressEnabled = cfg.EgressEnabled, cfg.IngressEnabled
	q.MaxMsgSpoolUsage = cfg.MaxMsgSpoolUsage
	q.MaxRedeliveryCount = int64(cfg.MaxRedeliveryCount)
	q.Owner = cfg.Owner
	if cfg.Permission != "" {
		q.Permission = cfg.Permission
	}
	q.RespectTTLEnabled = cfg.RespectTTL
	return q
}

// sempMonitorQueue is the monitor API's MsgVpnQueue: configuration plus live
// state. SEMPv2 has no bindCount attribute; the consumer count is the size
// of the txFlows collection (sempQueueCollections).
type sempMonitorQueue struct {
	AccessType                     string `json:"accessType"`
	DeadMsgQueue                   string `json:"deadMsgQueue"`
	Durable                        bool   `json:"durable"`
	EgressEnabled                  bool   `json:"egressEnabled"`
	IngressEnabled                 bool   `json:"ingressEnabled"`
	MaxBindCount                   int64  `json:"maxBindCount"`
	MaxDeliveredUnackedMsgsPerFlow int64  `json:"maxDeliveredUnackedMsgsPerFlow"`
	MaxMsgSize                     int32  `json:"maxMsgSize"`
	MaxMsgSpoolUsage               int64  `json:"maxMsgSpoolUsage"`
	MaxRedeliveryCount             int64  `json:"maxRedeliveryCount"`
	MaxTTL                         int64  `json:"maxTtl"`
	// MsgSpoolUsage is the bytes held now.
	MsgSpoolUsage       int64  `json:"msgSpoolUsage"`
	MsgVpnName          string `json:"msgVpnName"`
	Owner               string `json:"owner"`
	Permission          string `json:"permission"`
	QueueName           string `json:"queueName"`
	RedeliveredMsgCount int64  `json:"redeliveredMsgCount"`
	RedeliveryEnabled   bool   `json:"redeliveryEnabled"`
	RespectTTLEnabled   bool   `json:"respectTtlEnabled"`
	SpooledByteCount    int64  `json:"spooledByteCount"`
	// SpooledMsgCount is the number of messages held now, delivered or not
	// (the spec words it as a count of messages spooled).
	SpooledMsgCount   int64  `json:"spooledMsgCount"`
	TxUnackedMsgCount int64  `json:"txUnackedMsgCount"`
	VirtualRouter     string `json:"virtualRouter"`
}

func monitorQueueJSON(vpn string, cfg QueueConfig, st QueueStats) sempMonitorQueue {
	c := configQueueJSON(vpn, cfg)
	return sempMonitorQueue{
		AccessType:                     c.AccessType,
		DeadMsgQueue:                   c.DeadMsgQueue,
		Durable:                        cfg.Durable,
		EgressEnabled:                  c.EgressEnabled,
		IngressEnabled:                 c.IngressEnabled,
		MaxBindCount:                   c.MaxBindCount,
		MaxDeliveredUnackedMsgsPerFlow: c.MaxDeliveredUnackedMsgsPerFlow,
		MaxMsgSize:                     c.MaxMsgSize,
		MaxMsgSpoolUsage:               c.MaxMsgSpoolUsage,
		MaxRedeliveryCount:             c.MaxRedeliveryCount,
		MaxTTL:                         c.MaxTTL,
		MsgSpoolUsage:                  st.SpooledBytes,
		MsgVpnName:                     vpn,
		Owner:                          c.Owner,
		Permission:                     c.Permission,
		QueueName:                      cfg.Name,
		RedeliveredMsgCount:            int64(st.Redelivered),
		RedeliveryEnabled:              c.RedeliveryEnabled,
		RespectTTLEnabled:              c.RespectTTLEnabled,
		SpooledByteCount:               st.SpooledBytes,
		SpooledMsgCount:                int64(st.SpooledMsgCount),
		TxUnackedMsgCount:              int64(st.Unacked),
		VirtualRouter:                  "primary",
	}
}

type sempCount struct {
	Count int64 `json:"count"`
}

// sempQueueCollections is the monitor API's MsgVpnQueueCollections.
type sempQueueCollections struct {
	Msgs          sempCount `json:"msgs"`
	Subscriptions sempCount `json:"subscriptions"`
	TxFlows       sempCount `json:"txFlows"`
}

type sempQueueLinks struct {
	SubscriptionsURI string `json:"subscriptionsUri"`
	URI              string `json:"uri"`
}

type sempSubscription struct {
	MsgVpnName        string `json:"msgVpnName"`
	QueueName         string `json:"queueName"`
	SubscriptionTopic string `json:"subscriptionTopic"`
}

type sempURILink struct {
	URI string `json:"uri"`
}

// --- request bodies ---

// queueChanges is a parsed MsgVpnQueue request body: the attributes the
// broker models, nil when absent.
type queueChanges struct {
	name, vpn                      *string
	accessType, permission, owner  *string
	deadMsgQueue                   *string
	ingress, egress, respectTTL    *bool
	maxRedeliveryCount, maxSpoolMB *int64
}

// sempQueueDefaultAttrs holds the JSON default of every MsgVpnQueue attribute
// the broker does not model.
var sempQueueDefaultAttrs = func() map[string]any {
	raw, _ := json.Marshal(sempQueueDefaults())
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"queueName", "msgVpnName", "accessType", "permission", "owner", "deadMsgQueue",
		"ingressEnabled", "egressEnabled", "respectTtlEnabled", "maxRedeliveryCount", "maxMsgSpoolUsage"} {
		delete(m, k)
	}
	return m
}()

// readBody decodes a JSON object body into its attributes.
func (c *sempCall) readBody() (map[string]json.RawMessage, *sempErr) {
	raw, err := io.ReadAll(io.LimitReader(c.r.Body, maxSEMPBody+1))
	if err != nil {
		return nil, errInvalid("reading request body: %v", err)
	}
	if len(raw) > maxSEMPBody {
		return nil, errInvalid("request body exceeds %d bytes", maxSEMPBody)
	}
	if ct := c.r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, errInvalid("content type %q is not application/json", ct)
	}
	var attrs map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&attrs); err != nil || attrs == nil {
		return nil, errInvalid("request body is not a JSON object")
	}
	if dec.More() {
		return nil, errInvalid("request body has data after the JSON object")
	}
	return attrs, nil
}

func decodeAttr[T any](attrs map[string]json.RawMessage, name string, dst **T) *sempErr {
	raw, ok := attrs[name]
	if !ok {
		return nil
	}
	delete(attrs, name)
	if string(raw) == "null" {
		return errInvalid("attribute %q is null", name)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return errInvalid("attribute %q: %v", name, err)
	}
	*dst = &v
	return nil
}

// parseQueueBody reads a MsgVpnQueue body. Unknown attributes are an error;
// attributes the broker does not model are accepted only at their defaults,
// so a client never believes it configured behaviour that is not there.
func (c *sempCall) parseQueueBody() (*queueChanges, *sempErr) {
	attrs, err := c.readBody()
	if err != nil {
		return nil, err
	}
	var q queueChanges
	for _, d := range []struct {
		name string
		dst  **string
	}{
		{"queueName", &q.name}, {"msgVpnName", &q.vpn}, {"accessType", &q.accessType},
		{"permission", &q.permission}, {"owner", &q.owner}, {"deadMsgQueue", &q.deadMsgQueue},
	} {
		if err := decodeAttr(attrs, d.name, d.dst); err != nil {
			return nil, err
		}
	}
	for _, d := range []struct {
		name string
		dst  **bool
	}{{"ingressEnabled", &q.ingress}, {"egressEnabled", &q.egress}, {"respectTtlEnabled", &q.respectTTL}} {
		if err := decodeAttr(attrs, d.name, d.dst); err != nil {
			return nil, err
		}
	}
	for _, d := range []struct {
		name string
		dst  **int64
	}{{"maxRedeliveryCount", &q.maxRedeliveryCount}, {"maxMsgSpoolUsage", &q.maxSpoolMB}} {
		if err := decodeAttr(attrs, d.name, d.dst); err != nil {
			return nil, err
		}
	}
	if q.accessType != nil && *q.accessType != string(AccessExclusive) && *q.accessType != string(AccessNonExclusive) {
		return nil, errInvalid("accessType %q is not one of exclusive, non-exclusive", *q.accessType)
	}
	if q.permission != nil && !slices.Contains([]string{"no-access", "read-only", "consume", "modify-topic", "delete"}, *q.permission) {
		return nil, errInvalid("permission %q is not one of no-access, read-only, consume, modify-topic, delete", *q.permission)
	}
	if q.maxRedeliveryCount != nil && (*q.maxRedeliveryCount < 0 || *q.maxRedeliveryCount > 255) {
		return nil, errInvalid("maxRedeliveryCount %d is outside 0-255", *q.maxRedeliveryCount)
	}
	if q.maxSpoolMB != nil && *q.maxSpoolMB < 0 {
		return nil, errInvalid("maxMsgSpoolUsage %d is negative", *q.maxSpoolMB)
	}
	for name, raw := range attrs {
		def, known := sempQueueDefaultAttrs[name]
		if !known {
			return nil, errInvalid("unknown attribute %q", name)
		}
		if strings.HasPrefix(name, "event") {
			// Event thresholds only raise broker events: any well-formed
			// EventThreshold is accepted and has no effect.
			var th struct {
				ClearPercent, ClearValue, SetPercent, SetValue *int64
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&th); err != nil || bytes.TrimSpace(raw)[0] != '{' {
				return nil, errInvalid("attribute %q is not an EventThreshold object", name)
			}
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil || !reflect.DeepEqual(v, def) {
			return nil, errNotSupported("the test broker does not implement attribute %q; only its default %s is accepted", name, mustJSON(def))
		}
	}
	return &q, nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// apply copies the changes onto cfg.
func (q *queueChanges) apply(cfg *QueueConfig) {
	if q.accessType != nil {
		cfg.AccessType = AccessType(*q.accessType)
	}
	if q.permission != nil {
		cfg.Permission = *q.permission
	}
	if q.owner != nil {
		cfg.Owner = *q.owner
	}
	if q.deadMsgQueue != nil {
		cfg.DeadMsgQueue = *q.deadMsgQueue
	}
	if q.ingress != nil {
		cfg.IngressEnabled = *q.ingress
	}
	if q.egress != nil {
		cfg.EgressEnabled = *q.egress
	}
	if q.respectTTL != nil {
		cfg.RespectTTL = *q.respectTTL
	}
	if q.maxRedeliveryCount != nil {
		cfg.MaxRedeliveryCount = int(*q.maxRedeliveryCount)
	}
	if q.maxSpoolMB != nil {
		// SEMP's 0 means "only the last message"; the broker's 0 means no
		// limit. Nobody configures the former on purpose.
		cfg.MaxMsgSpoolUsage = *q.maxSpoolMB
	}
}

// checkIdentity rejects a body whose identifying attributes contradict the
// path.
func (q *queueChanges) checkIdentity(vpn, name string) *sempErr {
	if q.vpn != nil && *q.vpn != vpn {
		return errInvalid("msgVpnName %q does not match the request path's %q", *q.vpn, vpn)
	}
	if q.name != nil && name != "" && *q.name != name {
		return errInvalid("queueName %q does not match the request path's %q", *q.name, name)
	}
	return nil
}

// newQueueConfig is a queue created through SEMP: SEMP's defaults, then the
// request's attributes. Ingress and egress default to enabled (unlike a real
// broker, whose defaults are disabled), as QueueConfig documents.
func newQueueConfig(name string, q *queueChanges) QueueConfig {
	cfg := QueueConfig{
		Name: name, AccessType: AccessExclusive, Permission: "no-access", DeadMsgQueue: sempDefaultDMQ,
		MaxMsgSpoolUsage: sempDefaultSpoolMB, IngressEnabled: true, EgressEnabled: true, Durable: true,
	}
	q.apply(&cfg)
	return cfg
}

// --- handlers ---

func (s *sempServer) createQueue(c *sempCall, vpn string) *sempErr {
	q, err := c.parseQueueBody()
	if err != nil {
		return err
	}
	if err := q.checkIdentity(vpn, ""); err != nil {
		return err
	}
	if q.name == nil || *q.name == "" {
		return errInvalid("missing required attribute queueName")
	}
	name := *q.name
	if err := s.create(vpn, newQueueConfig(name, q)); err != nil {
		return err
	}
	s.log.Info("semp: queue created", "vpn", vpn, "queue", name)
	return s.getQueue(c, vpn, name)
}

// create makes a queue. The admin turns a queue with ingress and egress both
// off into one with both on; an explicit request for both off is applied
// after creation.
func (s *sempServer) create(vpn string, cfg QueueConfig) *sempErr {
	if err := s.admin.CreateQueue(vpn, cfg); err != nil {
		return adminErr(err)
	}
	if !cfg.IngressEnabled && !cfg.EgressEnabled {
		if err := s.admin.UpdateQueue(vpn, cfg.Name, func(c *QueueConfig) {
			c.IngressEnabled, c.EgressEnabled = false, false
		}); err != nil {
			return adminErr(err)
		}
	}
	return nil
}

// durableQueue looks up a queue the config API can see: temporary queues
// are not configuration objects.
func (s *sempServer) durableQueue(vpn, name string, monitor bool) (QueueConfig, QueueStats, *sempErr) {
	cfg, st, err := s.admin.Queue(vpn, name)
	if err != nil {
		return cfg, st, adminErr(err)
	}
	if !cfg.Durable && !monitor {
		return cfg, st, errNotFound("could not find match for queue %q in VPN %q", name, vpn)
	}
	return cfg, st, nil
}

func (s *sempServer) getQueue(c *sempCall, vpn, name string) *sempErr {
	monitor := c.api == sempMonitorBase
	cfg, st, err := s.durableQueue(vpn, name, monitor)
	if err != nil {
		return err
	}
	links := c.queueLinks(vpn, name)
	if monitor {
		return c.writeObject(monitorQueueJSON(vpn, cfg, st), links, queueCollections(cfg, st))
	}
	return c.writeObject(configQueueJSON(vpn, cfg), links, nil)
}

func queueCollections(cfg QueueConfig, st QueueStats) sempQueueCollections {
	return sempQueueCollections{
		Msgs:          sempCount{int64(st.SpooledMsgCount)},
		Subscriptions: sempCount{int64(len(cfg.Subscriptions))},
		TxFlows:       sempCount{int64(st.Consumers)},
	}
}

func (s *sempServer) listQueues(c *sempCall, vpn string) *sempErr {
	monitor := c.api == sempMonitorBase
	all, err := s.admin.Queues(vpn)
	if err != nil {
		return adminErr(err)
	}
	keys := make([]string, 0, len(all))
	for _, q := range all {
		if q.Durable || monitor {
			keys = append(keys, q.Name)
		}
	}
	slices.Sort(keys)
	page, next, perr := c.page(keys)
	if perr != nil {
		return perr
	}
	var data, links, cols []any
	for _, name := range page {
		cfg, st, err := s.admin.Queue(vpn, name)
		if err != nil {
			continue // deleted since the listing
		}
		if monitor {
			data = append(data, monitorQueueJSON(vpn, cfg, st))
			cols = append(cols, queueCollections(cfg, st))
		} else {
			data = append(data, configQueueJSON(vpn, cfg))
		}
		links = append(links, c.queueLinks(vpn, name))
	}
	return c.writeList(data, links, cols, len(keys), next)
}

func (s *sempServer) updateQueue(c *sempCall, vpn, name string, replace bool) *sempErr {
	q, err := c.parseQueueBody()
	if err != nil {
		return err
	}
	if err := q.checkIdentity(vpn, name); err != nil {
		return err
	}
	existing, _, qerr := s.durableQueue(vpn, name, false)
	switch {
	case qerr != nil && replace && qerr.code == sempCodeNotFound:
		// PUT creates a missing object.
		if err := s.create(vpn, newQueueConfig(name, q)); err != nil {
			return err
		}
		return s.getQueue(c, vpn, name)
	case qerr != nil:
		return qerr
	}
	upd := func(cfg *QueueConfig) { q.apply(cfg) }
	if replace {
		// PUT sets absent attributes to their defaults.
		fresh := newQueueConfig(name, q)
		fresh.Subscriptions, fresh.Durable = existing.Subscriptions, existing.Durable
		upd = func(cfg *QueueConfig) {
			subs := cfg.Subscriptions
			*cfg = fresh
			cfg.Subscriptions = subs
		}
	}
	if err := s.admin.UpdateQueue(vpn, name, upd); err != nil {
		return adminErr(err)
	}
	return s.getQueue(c, vpn, name)
}

func (s *sempServer) deleteQueue(c *sempCall, vpn, name string) *sempErr {
	if _, _, err := s.durableQueue(vpn, name, false); err != nil {
		return err
	}
	if err := s.admin.DeleteQueue(vpn, name); err != nil {
		return adminErr(err)
	}
	s.log.Info("semp: queue deleted", "vpn", vpn, "queue", name)
	return c.writeMetaOnly()
}

func (s *sempServer) listSubscriptions(c *sempCall, vpn, queue string) *sempErr {
	cfg, _, err := s.durableQueue(vpn, queue, c.api == sempMonitorBase)
	if err != nil {
		return err
	}
	topics := slices.Clone(cfg.Subscriptions)
	slices.Sort(topics)
	page, next, err := c.page(topics)
	if err != nil {
		return err
	}
	var data, links []any
	for _, t := range page {
		data = append(data, sempSubscription{MsgVpnName: vpn, QueueName: queue, SubscriptionTopic: t})
		links = append(links, sempURILink{URI: c.subscriptionURI(vpn, queue, t)})
	}
	return c.writeList(data, links, nil, len(topics), next)
}

func (s *sempServer) addSubscription(c *sempCall, vpn, queue string) *sempErr {
	attrs, err := c.readBody()
	if err != nil {
		return err
	}
	var topic, bodyVPN, bodyQueue *string
	for _, d := range []struct {
		name string
		dst  **string
	}{{"subscriptionTopic", &topic}, {"msgVpnName", &bodyVPN}, {"queueName", &bodyQueue}} {
		if err := decodeAttr(attrs, d.name, d.dst); err != nil {
			return err
		}
	}
	for name := range attrs {
		return errInvalid("unknown attribute %q", name)
	}
	if topic == nil || *topic == "" {
		return errInvalid("missing required attribute subscriptionTopic")
	}
	if bodyVPN != nil && *bodyVPN != vpn {
		return errInvalid("msgVpnName %q does not match the request path's %q", *bodyVPN, vpn)
	}
	if bodyQueue != nil && *bodyQueue != queue {
		return errInvalid("queueName %q does not match the request path's %q", *bodyQueue, queue)
	}
	if _, _, err := s.durableQueue(vpn, queue, false); err != nil {
		return err
	}
	if err := s.admin.AddQueueSubscription(vpn, queue, *topic); err != nil {
		return adminErr(err)
	}
	return c.writeObject(sempSubscription{MsgVpnName: vpn, QueueName: queue, SubscriptionTopic: *topic},
		sempURILink{URI: c.subscriptionURI(vpn, queue, *topic)}, nil)
}

func (s *sempServer) getSubscription(c *sempCall, vpn, queue, topic string) *sempErr {
	cfg, _, err := s.durableQueue(vpn, queue, false)
	if err != nil {
		return err
	}
	if !slices.Contains(cfg.Subscriptions, topic) {
		return errNotFound("could not find match for subscription %q on queue %q", topic, queue)
	}
	return c.writeObject(sempSubscription{MsgVpnName: vpn, QueueName: queue, SubscriptionTopic: topic},
		sempURILink{URI: c.subscriptionURI(vpn, queue, topic)}, nil)
}

func (s *sempServer) removeSubscription(c *sempCall, vpn, queue, topic string) *sempErr {
	if _, _, err := s.durableQueue(vpn, queue, false); err != nil {
		return err
	}
	if err := s.admin.RemoveQueueSubscription(vpn, queue, topic); err != nil {
		return adminErr(err)
	}
	return c.writeMetaOnly()
}

// --- paging and select ---

// page cuts the sorted keys at the request's cursor and count. The cursor is
// the last key of the previous page, so paging stays consistent while
// objects come and go.
func (c *sempCall) page(keys []string) (page []string, nextCursor string, err *sempErr) {
	q := c.r.URL.Query()
	count := sempDefaultCount
	if s := q.Get("count"); s != "" {
		n, convErr := strconv.Atoi(s)
		if convErr != nil || n < 1 {
			return nil, "", errInvalid("count %q is not an integer of at least 1", s)
		}
		count = min(n, sempMaxCount)
	}
	start := 0
	if cur := q.Get("cursor"); cur != "" {
		after, decErr := base64.RawURLEncoding.DecodeString(cur)
		if decErr != nil {
			return nil, "", errInvalid("cursor %q is not valid", cur)
		}
		start, _ = slices.BinarySearch(keys, string(after))
		if start < len(keys) && keys[start] == string(after) {
			start++
		}
	}
	end := min(start+count, len(keys))
	page = keys[start:end]
	if end < len(keys) {
		nextCursor = base64.RawURLEncoding.EncodeToString([]byte(keys[end-1]))
	}
	return page, nextCursor, nil
}

// sempSelect is a parsed select parameter: top-level attribute names, with
// '*' wildcards, to include or (prefixed '-') exclude.
type sempSelect struct {
	include, exclude []string
}

func parseSelect(s string) (*sempSelect, *sempErr) {
	var sel sempSelect
	for _, name := range strings.Split(s, ",") {
		if neg, ok := strings.CutPrefix(name, "-"); ok {
			sel.exclude = append(sel.exclude, neg)
		} else {
			if len(sel.exclude) > 0 {
				return nil, errInvalid("select: %q follows an excluded attribute", name)
			}
			sel.include = append(sel.include, name)
		}
	}
	for _, p := range append(slices.Clone(sel.include), sel.exclude...) {
		if _, err := path.Match(p, ""); err != nil || p == "" || strings.Contains(p, ".") {
			return nil, errNotSupported("select: attribute pattern %q is not supported", p)
		}
	}
	return &sel, nil
}

// apply filters one object's attributes. Identifying attributes are kept by
// real brokers only when selected; we do the same.
func (sel *sempSelect) apply(v any) (any, *sempErr) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, &sempErr{http.StatusInternalServerError, 0, "ERROR", err.Error()}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return v, nil // not an object
	}
	match := func(patterns []string, name string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	for _, p := range append(slices.Clone(sel.include), sel.exclude...) {
		found := false
		for name := range m {
			if ok, _ := path.Match(p, name); ok {
				found = true
				break
			}
		}
		if !found {
			return nil, errInvalid("select: %q matches no attribute", p)
		}
	}
	for name := range m {
		if (len(sel.include) > 0 && !match(sel.include, name)) || match(sel.exclude, name) {
			delete(m, name)
		}
	}
	return m, nil
}

// --- responses ---

type sempRequestMeta struct {
	Method string `json:"method"`
	URI    string `json:"uri"`
}

type sempErrorBody struct {
	Code        int    `json:"code"`
	Description string `json:"description"`
	Status      string `json:"status"`
}

type sempPaging struct {
	CursorQuery string `json:"cursorQuery"`
	NextPageURI string `json:"nextPageUri"`
}

type sempMeta struct {
	Count        *int64          `json:"count,omitempty"`
	Error        *sempErrorBody  `json:"error,omitempty"`
	Paging       *sempPaging     `json:"paging,omitempty"`
	Request      sempRequestMeta `json:"request"`
	ResponseCode int             `json:"responseCode"`
}

type sempResponse struct {
	Collections any      `json:"collections,omitempty"`
	Data        any      `json:"data,omitempty"`
	Links       any      `json:"links,omitempty"`
	Meta        sempMeta `json:"meta"`
}

func (c *sempCall) baseURL() string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.r.Host
}

func (c *sempCall) meta(code int) sempMeta {
	return sempMeta{Request: sempRequestMeta{Method: c.r.Method, URI: c.baseURL() + c.r.URL.RequestURI()}, ResponseCode: code}
}

func (c *sempCall) queueURI(vpn, name string) string {
	return c.baseURL() + c.api + "/msgVpns/" + url.PathEscape(vpn) + "/queues/" + url.PathEscape(name)
}

func (c *sempCall) queueLinks(vpn, name string) sempQueueLinks {
	u := c.queueURI(vpn, name)
	return sempQueueLinks{URI: u, SubscriptionsURI: u + "/subscriptions"}
}

func (c *sempCall) subscriptionURI(vpn, queue, topic string) string {
	return c.queueURI(vpn, queue) + "/subscriptions/" + url.PathEscape(topic)
}

func (c *sempCall) write(code int, resp sempResponse) *sempErr {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // topics hold '>'
	if err := enc.Encode(resp); err != nil {
		return &sempErr{http.StatusInternalServerError, 0, "ERROR", "encoding response: " + err.Error()}
	}
	c.status = code
	c.w.Header().Set("Content-Type", "application/json")
	c.w.Header().Set("Cache-Control", "no-store")
	c.w.WriteHeader(code)
	_, _ = c.w.Write(buf.Bytes())
	return nil
}

func (c *sempCall) writeObject(data, links, collections any) *sempErr {
	if c.sel != nil {
		var err *sempErr
		if data, err = c.sel.apply(data); err != nil {
			return err
		}
	}
	resp := sempResponse{Data: data, Links: links, Meta: c.meta(http.StatusOK)}
	if collections != nil {
		resp.Collections = collections
	}
	return c.write(http.StatusOK, resp)
}

func (c *sempCall) writeList(data, links, collections []any, total int, nextCursor string) *sempErr {
	if data == nil {
		data, links = []any{}, []any{}
	}
	if c.sel != nil {
		for i := range data {
			var err *sempErr
			if data[i], err = c.sel.apply(data[i]); err != nil {
				return err
			}
		}
	}
	meta := c.meta(http.StatusOK)
	n := int64(total)
	meta.Count = &n
	if nextCursor != "" {
		q := c.r.URL.Query()
		q.Set("cursor", nextCursor)
		next := url.URL{Path: c.r.URL.Path, RawPath: c.r.URL.RawPath, RawQuery: q.Encode()}
		meta.Paging = &sempPaging{CursorQuery: nextCursor, NextPageURI: c.baseURL() + next.RequestURI()}
	}
	resp := sempResponse{Data: data, Links: links, Meta: meta}
	if collections != nil {
		resp.Collections = collections
	}
	return c.write(http.StatusOK, resp)
}

func (c *sempCall) writeMetaOnly() *sempErr {
	return c.write(http.StatusOK, sempResponse{Meta: c.meta(http.StatusOK)})
}

func (c *sempCall) fail(e *sempErr) {
	meta := c.meta(e.httpStatus)
	meta.Error = &sempErrorBody{Code: e.code, Description: e.desc, Status: e.status}
	if err := c.write(e.httpStatus, sempResponse{Meta: meta}); err != nil {
		c.status = http.StatusInternalServerError
		http.Error(c.w, err.desc, http.StatusInternalServerError)
	}
}
