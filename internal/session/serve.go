package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
	"solace.dev/go/messaging/pkg/solace/resource"
)

// ServerConfig configures a request server.
type ServerConfig struct {
	// Topics are the request subscriptions (wildcards allowed), one client
	// receiver each.
	Topics []string
	// ShareName, when set, makes every subscription shared under this name
	// (#share/<name>/<topic>): the broker hands each request to one member.
	ShareName string
	// Buffer is how many received requests may wait to be taken; a request
	// that finds it full is refused (PubSub+ direct messaging keeps no
	// backlog): see NewServer.
	Buffer int
}

// refuseHeadroom is how many requests more than Buffer the client's own
// buffer holds before it drops the newest unseen: room for a burst to
// reach the server's handler, which refuses what Buffer has no room for.
const refuseHeadroom = 1024

// Request is one request received by a Server, converted to plain Go values,
// with the means to answer it.
type Request struct {
	Payload []byte
	// Meta holds the request's attributes, as Inbound.Meta.
	Meta       []MetaField
	Properties map[string]any

	replier solace.Replier
	srv     *Server
}

// ErrNoReplyTo reports a request that carries no reply-to destination: the
// client's replier cannot answer it.
var ErrNoReplyTo = errors.New("the request has no reply-to destination")

// Server receives requests on one Session through the client's request-reply
// receivers, whose replier answers each on its reply-to with its correlation
// id and the SMF reply flag, as a Solace requester expects.
type Server struct {
	sess      *Session
	receivers []solace.RequestReplyMessageReceiver
	builder   solace.OutboundMessageBuilder
	requests  chan *Request
	// onRefused is given each request the server cannot take.
	onRefused func(*Request)

	closeOnce sync.Once
	closed    chan struct{}
}

// NewServer starts one request receiver per topic of cfg on s. onRefused,
// if not nil, is given every request the server cannot take, so that its
// requester can learn at once (say, from a reply that carries the error)
// rather than at its timeout: one that finds the buffer full, and on Close
// those still waiting to be taken. It must not block.
func (s *Session) NewServer(cfg ServerConfig, onRefused func(*Request)) (*Server, error) {
	if len(cfg.Topics) == 0 {
		return nil, errors.New("request server: no topics")
	}
	if cfg.Buffer < 1 {
		cfg.Buffer = 1
	}
	srv := &Server{
		sess:      s,
		builder:   s.svc.MessageBuilder(),
		requests:  make(chan *Request, cfg.Buffer),
		onRefused: onRefused,
		closed:    make(chan struct{}),
	}
	for _, t := range cfg.Topics {
		// The client's own buffer (50 by default) drops the newest
		// unseen; it only hands requests on to ours, which refuses what it
		// has no room for, so it holds a burst more.
		b := s.svc.RequestReply().CreateRequestReplyMessageReceiverBuilder().
			OnBackPressureDropLatest(uint(cfg.Buffer + refuseHeadroom))
		sub := resource.TopicSubscriptionOf(t)
		var (
			rcv solace.RequestReplyMessageReceiver
			err error
		)
		if cfg.ShareName != "" {
			rcv, err = b.BuildWithSharedSubscription(sub, resource.ShareNameOf(cfg.ShareName))
		} else {
			rcv, err = b.Build(sub)
		}
		if err == nil {
			if err = rcv.Start(); err == nil {
				srv.receivers = append(srv.receivers, rcv)
				err = rcv.ReceiveAsync(srv.onRequest)
			}
		}
		if err != nil {
			_ = srv.Close(context.Background())
			return nil, fmt.Errorf("subscribing to requests on topic %q: %w", t, err)
		}
	}
	return srv, nil
}

func (srv *Server) onRequest(msg message.InboundMessage, replier solace.Replier) {
	in := convertOne(srv.sess.svc, msg)
	msg.Dispose()
	req := &Request{Payload: in.Payload, Meta: in.Meta, Properties: in.Properties, replier: replier, srv: srv}
	select {
	case srv.requests <- req:
	default:
		srv.refuse(req)
	}
}

func (srv *Server) refuse(req *Request) {
	if srv.onRefused != nil {
		srv.onRefused(req)
	}
}

// Receive returns the next request, or an error once ctx ends, the session
// ended or the server closed.
func (srv *Server) Receive(ctx context.Context) (*Request, error) {
	select {
	case req := <-srv.requests:
		return req, nil
	default:
	}
	select {
	case req := <-srv.requests:
		return req, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-srv.sess.Down():
		return nil, fmt.Errorf("%w: %v", ErrSessionDown, srv.sess.Err())
	case <-srv.closed:
		return nil, ErrSessionDown
	}
}

// CanReply reports whether the request carries a reply-to destination.
func (req *Request) CanReply() bool { return req.replier != nil }

// Reply answers the request with o's payload and attributes (o.Destination,
// o.CorrelationID and o.ReplyTo are ignored: a reply goes to the request's
// reply-to with its correlation id). It fails while the session is down:
// PubSub+ would not keep the reply for the requester anyway.
func (req *Request) Reply(o *Outbound) error {
	if req.replier == nil {
		return ErrNoReplyTo
	}
	plain := *o
	plain.CorrelationID, plain.ReplyTo = "", ""
	m, err := buildMessage(req.srv.builder, &plain)
	if err != nil {
		return err
	}
	defer m.Dispose()
	if err := req.replier.Reply(m); err != nil {
		return fmt.Errorf("replying: %w", err)
	}
	return nil
}

// Close terminates the receivers and refuses the requests still waiting to
// be taken; requests taken but not yet answered get no reply.
func (srv *Server) Close(ctx context.Context) error {
	var errs []error
	srv.closeOnce.Do(func() {
		close(srv.closed)
		for _, rcv := range srv.receivers {
			done := make(chan error, 1)
			go func() { done <- rcv.Terminate(0) }()
			select {
			case err := <-done:
				var ise *solace.IllegalStateError
				if err != nil && !errors.As(err, &ise) {
					errs = append(errs, err)
				}
			case <-ctx.Done():
				errs = append(errs, ctx.Err())
			}
		}
	drain:
		for {
			select {
			case req := <-srv.requests:
				srv.refuse(req)
			default:
				break drain
			}
		}
	})
	return errors.Join(errs...)
}
