// Command toxiproxy-front puts a toxiproxy server on the loopback interface
// for scripts/solace-go-suite.sh. It forwards toxiproxy's HTTP API and
// rewrites the proxies clients create: a listen address without a host
// (":N", as Solace's Go client suite asks for) binds 127.0.0.1 only, and an
// upstream whose port is mapped (-map 55555=127.0.0.1:40001) goes to the
// mapped address, the way a container network maps a broker's well-known
// ports.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

type portMap map[string]string

func (m portMap) String() string { return fmt.Sprint(map[string]string(m)) }

func (m portMap) Set(v string) error {
	port, addr, ok := strings.Cut(v, "=")
	if _, err := strconv.Atoi(port); !ok || err != nil || addr == "" {
		return fmt.Errorf("want PORT=HOST:PORT, got %q", v)
	}
	m[port] = addr
	return nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8474", "address for the API clients use")
	upstream := flag.String("toxiproxy", "127.0.0.1:8475", "address of toxiproxy's API")
	ports := portMap{}
	flag.Var(ports, "map", "upstream `PORT=HOST:PORT` to send elsewhere, repeatable")
	flag.Parse()
	target, err := url.Parse("http://" + *upstream)
	if err != nil {
		log.Fatalf("-toxiproxy: %v", err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (strings.HasPrefix(r.URL.Path, "/proxies") || r.URL.Path == "/populate") &&
			!strings.Contains(r.URL.Path, "/toxics") {
			if err := rewriteBody(r, ports); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("-listen: %v", err)
	}
	fmt.Fprintf(os.Stdout, "toxiproxy-front ready: %s -> %s\n", ln.Addr(), *upstream)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}

// rewriteBody rewrites the proxy (an object) or proxies (an array, for
// /populate) in r's JSON body.
func rewriteBody(r *http.Request, ports portMap) error {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var one map[string]any
	var many []map[string]any
	switch {
	case json.Unmarshal(raw, &one) == nil:
		rewrite(one, ports)
		raw, err = json.Marshal(one)
	case json.Unmarshal(raw, &many) == nil:
		for _, p := range many {
			rewrite(p, ports)
		}
		raw, err = json.Marshal(many)
	}
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	return nil
}

func rewrite(p map[string]any, ports portMap) {
	if l, ok := p["listen"].(string); ok {
		if host, port, err := net.SplitHostPort(l); err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
			p["listen"] = net.JoinHostPort("127.0.0.1", port)
		}
	}
	if u, ok := p["upstream"].(string); ok {
		if _, port, err := net.SplitHostPort(u); err == nil && ports[port] != "" {
			p["upstream"] = ports[port]
		}
	}
}
