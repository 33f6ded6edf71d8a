package solacetest

// This file is the web transport: SMF carried in WebSocket binary messages,
// as PubSub+ serves it for ws:// and wss:// clients (ports 8008 and 1443 by
// default). The listener upgrades every HTTP request to a WebSocket and
// hands the broker a net.Conn whose byte stream is the concatenated binary
// messages, so the SMF layer above is the same as over TCP.

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// webListener accepts WebSocket connections on an HTTP server.
type webListener struct {
	ln    net.Listener
	srv   *http.Server
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// listenWeb serves the web transport on addr, over TLS when tlsConf is set.
func listenWeb(addr string, tlsConf *tls.Config, log *slog.Logger) (*webListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	wl := &webListener{ln: ln, conns: make(chan net.Conn), done: make(chan struct{})}
	up := websocket.Upgrader{
		ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10,
		// Messaging clients are not browsers; any origin may connect.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	wl.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up.Subprotocols = websocket.Subprotocols(r) // accept what the client asks for
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			log.Info("web transport: refused a non-WebSocket request", "path", r.URL.Path, "error", err)
			return
		}
		select {
		case wl.conns <- &wsConn{ws: ws}:
		case <-wl.done:
			_ = ws.Close()
		}
	})}
	go func() { _ = wl.srv.Serve(ln) }()
	return wl, nil
}

func (wl *webListener) Accept() (net.Conn, error) {
	select {
	case c := <-wl.conns:
		return c, nil
	case <-wl.done:
		return nil, net.ErrClosed
	}
}

func (wl *webListener) Close() error {
	err := net.ErrClosed
	wl.once.Do(func() {
		close(wl.done)
		err = wl.srv.Close()
	})
	return err
}

func (wl *webListener) Addr() net.Addr { return wl.ln.Addr() }

// wsConn is a WebSocket as a byte stream.
type wsConn struct {
	ws  *websocket.Conn
	cur io.Reader // the binary message being read

	wmu sync.Mutex
}

func (c *wsConn) Read(p []byte) (int, error) {
	for {
		if c.cur == nil {
			typ, r, err := c.ws.NextReader()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					return 0, io.EOF
				}
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				continue // SMF travels in binary messages only
			}
			c.cur = r
		}
		n, err := c.cur.Read(p)
		if errors.Is(err, io.EOF) {
			c.cur = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (c *wsConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *wsConn) Close() error                       { return c.ws.Close() }
func (c *wsConn) LocalAddr() net.Addr                { return c.ws.LocalAddr() }
func (c *wsConn) RemoteAddr() net.Addr               { return c.ws.RemoteAddr() }
func (c *wsConn) SetReadDeadline(t time.Time) error  { return c.ws.SetReadDeadline(t) }
func (c *wsConn) SetWriteDeadline(t time.Time) error { return c.ws.SetWriteDeadline(t) }
func (c *wsConn) SetDeadline(t time.Time) error {
	if err := c.ws.SetReadDeadline(t); err != nil {
		return err
	}
	return c.ws.SetWriteDeadline(t)
}
