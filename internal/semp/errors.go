package semp

import (
	"errors"
	"fmt"
	"net/http"
)

// SEMP error codes and status strings (meta.error.code / meta.error.status)
// that callers branch on. A real broker answers an unknown object with code
// 6 NOT_FOUND (HTTP 400 from the config API on some versions, 404 per the
// spec's method table) and a duplicate create with code 10 ALREADY_EXISTS
// (HTTP 400).
const (
	CodeNotFound      = 6
	CodeAlreadyExists = 10

	StatusNotFound      = "NOT_FOUND"
	StatusAlreadyExists = "ALREADY_EXISTS"
)

// Error is a SEMP request the broker (or something in front of it) refused.
// Code, Status and Description come from the response's meta.error; for a
// body that is not a SEMP envelope Description holds the start of the body.
type Error struct {
	HTTPStatus  int
	Code        int
	Status      string
	Description string
	Method      string
	Path        string // e.g. /SEMP/v2/config/msgVpns/default/queues/a/b, unescaped

	afterAmbiguous bool
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("semp: %s %s: HTTP %d", e.Method, e.Path, e.HTTPStatus)
	if e.Status != "" {
		msg += " " + e.Status
	} else if t := http.StatusText(e.HTTPStatus); t != "" {
		msg += " " + t
	}
	if e.Code != 0 {
		msg += fmt.Sprintf(" (code %d)", e.Code)
	}
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// IsNotFound reports whether err says the addressed object (queue,
// subscription, VPN) does not exist.
func IsNotFound(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if e.Status != "" || e.Code != 0 {
		return e.Status == StatusNotFound || e.Code == CodeNotFound
	}
	return e.HTTPStatus == http.StatusNotFound
}

// IsAlreadyExists reports whether err says a create met an existing object.
func IsAlreadyExists(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == StatusAlreadyExists || e.Code == CodeAlreadyExists
}

// IsUnauthorized reports whether the broker rejected the credentials.
func IsUnauthorized(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden)
}

// maybeApplied reports whether err followed an attempt the broker may have
// applied, so a NOT_FOUND after DELETE or ALREADY_EXISTS after POST can be
// our own earlier attempt rather than someone else's object.
func maybeApplied(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.afterAmbiguous
}
