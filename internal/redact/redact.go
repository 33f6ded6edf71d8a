// Package redact hides the password a user writes into a URL
// (scheme://user:password@host) before that URL goes into a log line or an
// error. Benthos scrubs such URLs from `echo` output through the URL field
// types; this package covers the places where our own code prints a URL.
//
// It works on the raw string rather than on net/url, so it also redacts
// strings that url.Parse rejects (whose parse errors would echo the whole
// input, password included).
package redact

import "strings"

// Mask replaces a password, as url.URL.Redacted does.
const Mask = "xxxxx"

// userinfo returns the bounds of raw's userinfo: everything between "://"
// (or the start, when raw has no scheme) and the last "@". Taking the last
// "@" over-redacts rather than leaks when a password holds an unescaped "@",
// "/" or "?".
func userinfo(raw string) (start, end int, ok bool) {
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + len("://")
	}
	end = strings.LastIndexByte(raw, '@')
	if end < start {
		return 0, 0, false
	}
	return start, end, true
}

// HasUserinfo reports whether raw carries a user name or password before its
// host.
func HasUserinfo(raw string) bool {
	_, _, ok := userinfo(raw)
	return ok
}

// URL returns raw with the password of its userinfo replaced by Mask; the
// user name is kept. A URL without a password is returned unchanged.
func URL(raw string) string {
	start, end, ok := userinfo(raw)
	if !ok {
		return raw
	}
	user, _, hasPass := strings.Cut(raw[start:end], ":")
	if !hasPass {
		return raw
	}
	return raw[:start] + user + ":" + Mask + raw[end:]
}

// URLs applies URL to each of raws.
func URLs(raws []string) []string {
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = URL(r)
	}
	return out
}
