package solacetest

// This file is the SEMP help pages. PubSub+ serves an interactive API
// reference at /SEMP/v2/{config,monitor,action}/help/ without
// authentication; tools (Solace's own test suite among them) poll the config
// one to learn that SEMP is up.

import (
	"html"
	"net/http"
	"strings"
)

// isSEMPHelp reports whether path is one of the help pages.
func isSEMPHelp(path string) bool {
	for _, base := range []string{sempConfigBase, sempMonitorBase, sempActionBase} {
		if rest, ok := strings.CutPrefix(path, base+"/help"); ok && (rest == "" || rest == "/") {
			return true
		}
	}
	return false
}

// serveSEMPHelp answers a help page and returns the HTTP status.
func serveSEMPHelp(w http.ResponseWriter, r *http.Request) int {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed
	}
	api := strings.TrimSuffix(strings.TrimSuffix(r.URL.Path, "/"), "/help")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><head><title>SEMP v2 " + html.EscapeString(api) +
		" help</title></head><body><h1>SEMP v2 API (solacetest)</h1><p>Base path <code>" + html.EscapeString(api) +
		"</code>. This test broker implements a subset of Solace's SEMPv2 API, version 2.34; " +
		"the package documentation of solacetest lists it.</p></body></html>\n"))
	return http.StatusOK
}
