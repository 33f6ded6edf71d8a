package input

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
	"github.com/connect-solace/connect-solace/internal/solacecfg"
)

// This file is the solace input's requests mode: it serves Solace requests
// (from any requester, such as the Go client's RequestReplyMessagePublisher
// or the solace_request_reply processor) and answers each with the
// pipeline's result through Benthos's sync_response mechanism, as
// http_server answers HTTP requests.

const (
	siFieldRequests          = "requests"
	siFieldRequestsTopics    = "topics"
	siFieldRequestsShareName = "share_name"
	siFieldRequestsMetadata  = "reply_metadata"
)

func siRequestsField() *service.ConfigField {
	return service.NewObjectField(siFieldRequests,
		service.NewStringListField(siFieldRequestsTopics).
			Description("The topic subscriptions requests arrive on (wildcards `*` and `>` allowed).").
			Example([]string{"services/pricing/>"}),
		service.NewStringField(siFieldRequestsShareName).
			Description("When set, the subscriptions are shared under this name: the broker hands each request to one of the instances that share it, for load balancing.").
			Default(""),
		service.NewMetadataFilterField(siFieldRequestsMetadata).
			Description("Which metadata of the response message travel with the reply as user properties. Unset sends none.").
			Optional(),
	).Description(`Serves requests instead of consuming a queue: the input subscribes to ` + "`topics`" + ` and answers every request with
the pipeline's result, which a ` + "`sync_response`" + ` output (or processor) sets, as ` + "`http_server`" + ` does. The reply is a real
Solace reply: it goes to the request's reply-to with its correlation id and the reply flag, so any Solace requester
(` + "`RequestReplyMessagePublisher`" + `, JCSMP's ` + "`Requestor`" + `, the ` + "`solace_request_reply`" + ` processor) accepts it.
Set ` + "`requests`" + ` or one of ` + "`queue`" + ` and ` + "`topic`" + `.

The request's payload is the message's content, its attributes and user properties its metadata, as in queue mode. When the
pipeline acknowledges the message, its sync response is sent back (an empty reply when the pipeline set none). When the
pipeline rejects it, or the sync response is flagged with a processor's error, the reply is empty and carries the error
in the user property ` + "`error`" + `, so that the requester fails at once instead of waiting for its timeout. A request that arrives while the
pipeline is ` + "`receive_buffer`" + ` requests behind (size it for the bursts your requesters send), and one still waiting when the input
closes, is refused the same way: an empty reply with the ` + "`error`" + ` property, counted in ` + "`solace_input_requests_dropped`" + `.
Requests are direct messages: one that arrives while the input reconnects is dropped by the broker and its requester times out;
a reply whose connection dropped is lost the same way.`).
		Optional()
}

// newSolaceInputFromParsed is the input of the mode the config chooses: the
// server of requests mode, else the reader of queue or direct mode.
func newSolaceInputFromParsed(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
	cfg, replyMeta, err := siRequestsFromParsed(conf)
	if err != nil || cfg == nil {
		if err != nil {
			return nil, err
		}
		return newSolaceReaderFromParsed(conf, mgr)
	}
	if err := siCheckFields(conf); err != nil {
		return nil, err
	}
	return newSolaceServerFromParsed(conf, mgr, cfg, replyMeta)
}

// siRequestsFromParsed reads the requests block, nil when it is absent.
func siRequestsFromParsed(conf *service.ParsedConfig) (*session.ServerConfig, *service.MetadataFilter, error) {
	// The block is present in every config (its fields have defaults):
	// its topics tell whether requests are served.
	ns := conf.Namespace(siFieldRequests)
	var cfg session.ServerConfig
	var err error
	if cfg.Topics, err = ns.FieldStringList(siFieldRequestsTopics); err != nil || len(cfg.Topics) == 0 {
		return nil, nil, err
	}
	if cfg.ShareName, err = ns.FieldString(siFieldRequestsShareName); err != nil {
		return nil, nil, err
	}
	var filter *service.MetadataFilter
	if ns.Contains(siFieldRequestsMetadata) {
		if filter, err = ns.FieldMetadataFilter(siFieldRequestsMetadata); err != nil {
			return nil, nil, err
		}
	}
	return &cfg, filter, nil
}

// siCheckFields checks the rules between the input's fields, as the queue
// mode's constructor and lint do.
func siCheckFields(conf *service.ParsedConfig) error {
	f, err := siFieldsFromParsed(conf)
	if err != nil {
		return err
	}
	return errors.Join(f.problems()...)
}

// solaceServer is the solace input in requests mode.
type solaceServer struct {
	log        *service.Logger
	conn       session.Config
	cfg        session.ServerConfig
	replyMeta  *service.MetadataFilter
	mReceived  *service.MetricCounter
	mReplied   *service.MetricCounter
	mFailed    *service.MetricCounter
	mDropped   *service.MetricCounter
	mReconnect *service.MetricCounter

	mu   sync.Mutex
	sess *session.Session
	srv  *session.Server
}

func newSolaceServerFromParsed(conf *service.ParsedConfig, mgr *service.Resources, cfg *session.ServerConfig, replyMeta *service.MetadataFilter) (*solaceServer, error) {
	s := &solaceServer{log: mgr.Logger(), cfg: *cfg, replyMeta: replyMeta}
	var err error
	if s.conn, err = solacecfg.ConfigFromParsed(conf); err != nil {
		return nil, err
	}
	if s.cfg.Buffer, err = conf.FieldInt(siFieldReceiveBuffer); err != nil {
		return nil, err
	}
	m := mgr.Metrics()
	s.mReceived = m.NewCounter("solace_input_received")
	s.mReplied = m.NewCounter("solace_input_replies")
	s.mFailed = m.NewCounter("solace_input_reply_failures", "reason")
	s.mDropped = m.NewCounter("solace_input_requests_dropped")
	s.mReconnect = m.NewCounter("solace_input_reconnects")
	return s, nil
}

func (s *solaceServer) Connect(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	sess, srv, err := openSession(ctx, s.conn, s.log, s.mReconnect, func(sess *session.Session) (*session.Server, error) {
		return sess.NewServer(s.cfg, s.refuse)
	})
	if err != nil {
		return err
	}
	s.sess, s.srv = sess, srv
	s.log.Infof("Serving Solace requests on %v", s.cfg.Topics)
	return nil
}

func (s *solaceServer) current() *session.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

func (s *solaceServer) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	srv := s.current()
	if srv == nil {
		return nil, nil, service.ErrNotConnected
	}
	req, err := srv.Receive(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		s.drop(srv)
		return nil, nil, service.ErrNotConnected
	}
	s.mReceived.Incr(1)
	msg := service.NewMessage(req.Payload)
	for k, v := range req.Properties {
		msg.MetaSetMut(k, v)
	}
	for _, f := range req.Meta {
		msg.MetaSetMut(solacecfg.MetaKeys[f.Key], f.Value)
	}
	msg, store := msg.WithSyncResponseStore()
	return service.MessageBatch{msg}, func(_ context.Context, perr error) error {
		s.reply(req, store, perr)
		return nil
	}, nil
}

// siReplyErrorProperty is the user property of the reply to a request the
// pipeline failed, holding the error.
const siReplyErrorProperty = "error"

// reply answers req with the pipeline's sync response, or with its error.
func (s *solaceServer) reply(req *session.Request, store *service.SyncResponseStore, perr error) {
	var o session.Outbound
	if perr != nil {
		o.UserProperties = map[string]any{siReplyErrorProperty: perr.Error()}
	} else if batches := store.Read(); len(batches) > 0 && len(batches[0]) > 0 {
		res := batches[0][0]
		if err := res.GetError(); err != nil {
			// A processor failed the message and it reached the sync
			// response flagged.
			o.UserProperties = map[string]any{siReplyErrorProperty: err.Error()}
			s.send(req, &o)
			return
		}
		b, err := res.AsBytes()
		if err != nil {
			s.mFailed.Incr(1, "invalid_response")
			s.log.Errorf("Solace request not answered: reading its sync response: %v", err)
			return
		}
		o.Payload = b
		if s.replyMeta != nil {
			o.UserProperties = map[string]any{}
			_ = s.replyMeta.WalkMut(res, func(k string, v any) error {
				o.UserProperties[k] = v
				return nil
			})
		}
	}
	s.send(req, &o)
}

// errRequestRefused is the error a refused request's reply carries.
var errRequestRefused = errors.New("request refused: the input's receive_buffer is full, or the input is closing")

// refuse answers a request the input cannot take with an empty reply
// carrying the error, as a failed one, so that its requester fails at once
// instead of at its timeout, and counts it as dropped. It runs on the
// client's receive goroutine and does not block.
func (s *solaceServer) refuse(req *session.Request) {
	s.mDropped.Incr(1)
	if !req.CanReply() {
		return
	}
	o := session.Outbound{UserProperties: map[string]any{siReplyErrorProperty: errRequestRefused.Error()}}
	if err := req.Reply(&o); err != nil {
		s.log.Debugf("Solace request refused without reply: %v", err)
	}
}

// send sends the reply o to req.
func (s *solaceServer) send(req *session.Request, o *session.Outbound) {
	if err := req.Reply(o); err != nil {
		label := session.ErrorLabel(err)
		if errors.Is(err, session.ErrNoReplyTo) {
			label = "no_reply_to"
		} else if label == "" {
			label = "error"
		}
		s.mFailed.Incr(1, label)
		s.log.Debugf("Solace request not answered: %v", err)
		return
	}
	s.mReplied.Incr(1)
}

// drop forgets a server whose session ended, so that Benthos reconnects.
func (s *solaceServer) drop(srv *session.Server) {
	dropIfCurrent(&s.mu, &s.srv, &s.sess, srv)
}

// openSession connects a session, reconnections counted in reconnects, and
// opens on it the receiver or server that open makes; the session is closed
// again when open fails. dropIfCurrent undoes it.
func openSession[T any](ctx context.Context, conf session.Config, log *service.Logger, reconnects *service.MetricCounter,
	open func(*session.Session) (T, error),
) (*session.Session, T, error) {
	var none T
	sess, err := session.Connect(ctx, conf, log, session.Events{
		OnReconnected: func() { reconnects.Incr(1) },
	})
	if err != nil {
		return nil, none, err
	}
	v, err := open(sess)
	if err != nil {
		_ = sess.Close(context.Background())
		return nil, none, err
	}
	return sess, v, nil
}

// dropIfCurrent forgets cur, the receiver or server that *held names under
// mu, and the session under it, unless a reconnect replaced it already, and
// closes both (allowing 10 s), so that Benthos's next Connect builds them
// anew.
func dropIfCurrent[T interface {
	comparable
	Close(context.Context) error
}](mu *sync.Mutex, held *T, sess **session.Session, cur T) {
	mu.Lock()
	if *held != cur {
		mu.Unlock()
		return
	}
	s := *sess
	var none T
	*held, *sess = none, nil
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = cur.Close(ctx)
	_ = s.Close(ctx)
}

func (s *solaceServer) Close(ctx context.Context) error {
	s.mu.Lock()
	srv, sess := s.srv, s.sess
	s.srv, s.sess = nil, nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return errors.Join(srv.Close(ctx), sess.Close(ctx))
}
