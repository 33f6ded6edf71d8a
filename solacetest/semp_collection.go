package solacetest

// This file is the shape the SEMP collections of named objects below
// msgVpns/{vpn} share (replay logs, client usernames, client profiles,
// OAuth profiles, authorization groups): list, get, create, update and
// delete, each read from the body and answered the same way. The files of
// the objects say what is particular to each: its JSON, its attributes and
// its broker calls.

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// vpnCollection is one collection of named objects of type T, served as
// SEMP objects from the admin A. Of the changing requests, only those whose
// broker call is set are routed.
type vpnCollection[T any, A queueAdmin] struct {
	path     string // the collection's path segment: "replayLogs"
	nameAttr string // the attribute that names an object: "replayLogName"
	monitor  bool   // the reads are served in the monitor API as well

	name   func(T) string
	object func(vpn string, v T) map[string]any // the SEMP object: its attributes by name
	// changes decodes a request body's attributes beyond the object's name
	// and VPN (which the collection reads) onto v, refusing what the broker
	// cannot take.
	changes func(attrs map[string]json.RawMessage, v *T) *sempErr
	fresh   func(name string) T // a created object before the body's changes: SEMP's defaults

	all    func(b A, vpn string) ([]T, error)
	create func(b A, vpn string, v T) error
	update func(b A, vpn, name string, change func(*T)) error
	remove func(b A, vpn, name string) error
}

// register routes the collection's requests: reads under config (and
// monitor), changes under config.
func (vc vpnCollection[T, A]) register(s *sempServer, b A) {
	const (
		config  = sempConfigBase + "/msgVpns/{vpn}/"
		monitor = sempMonitorBase + "/msgVpns/{vpn}/"
	)
	bases := []string{config}
	if vc.monitor {
		bases = append(bases, monitor)
	}
	for _, base := range bases {
		handleInVPN(s, "GET "+base+vc.path, b, vc.list)
		handleInVPN(s, "GET "+base+vc.path+"/{name}", b, vc.get)
	}
	if vc.create != nil {
		handleInVPN(s, "POST "+config+vc.path, b, vc.post)
	}
	if vc.update != nil {
		handleInVPN(s, "PATCH "+config+vc.path+"/{name}", b, vc.patch)
	}
	if vc.remove != nil {
		handleInVPN(s, "DELETE "+config+vc.path+"/{name}", b, vc.delete)
	}
}

// kind is the object's name in not-found errors: "replayLog".
func (vc vpnCollection[T, A]) kind() string { return strings.TrimSuffix(vc.path, "s") }

func (vc vpnCollection[T, A]) link(c *sempCall, vpn string, v T) sempURILink {
	return sempURILink{URI: c.vpnObjectURI(vpn, vc.path, vc.name(v))}
}

func (vc vpnCollection[T, A]) write(c *sempCall, vpn string, v T) *sempErr {
	return c.writeObject(vc.object(vpn, v), vc.link(c, vpn, v), nil)
}

// list answers a page of the collection, in name order.
func (vc vpnCollection[T, A]) list(c *sempCall, b A, vpn string) *sempErr {
	all, err := vc.all(b, vpn)
	if err != nil {
		return adminErr(err)
	}
	all = slices.Clone(all)
	slices.SortFunc(all, func(x, y T) int { return cmp.Compare(vc.name(x), vc.name(y)) })
	byName := make(map[string]T, len(all))
	keys := make([]string, len(all))
	for i, v := range all {
		keys[i] = vc.name(v)
		byName[keys[i]] = v
	}
	page, next, perr := c.page(keys)
	if perr != nil {
		return perr
	}
	return writeEach(c, page, len(keys), next, func(k string) (any, sempURILink) {
		return vc.object(vpn, byName[k]), vc.link(c, vpn, byName[k])
	})
}

func (vc vpnCollection[T, A]) find(c *sempCall, b A, vpn string) (T, *sempErr) {
	all, err := vc.all(b, vpn)
	if err != nil {
		var zero T
		return zero, adminErr(err)
	}
	return findNamed(all, vc.name, vc.kind(), c.r.PathValue("name"))
}

func (vc vpnCollection[T, A]) get(c *sempCall, b A, vpn string) *sempErr {
	v, err := vc.find(c, b, vpn)
	if err != nil {
		return err
	}
	return vc.write(c, vpn, v)
}

// body reads a create or update body: the name it gives (nil if none) and
// the other attributes. A VPN named in it must be the path's.
func (vc vpnCollection[T, A]) body(c *sempCall, vpn string) (name *string, attrs map[string]json.RawMessage, err *sempErr) {
	attrs, err = c.readBody()
	if err != nil {
		return nil, nil, err
	}
	var bodyVPN *string
	if e := firstErr(decodeAttr(attrs, vc.nameAttr, &name), decodeAttr(attrs, "msgVpnName", &bodyVPN)); e != nil {
		return nil, nil, e
	}
	if e := matchesPath("msgVpnName", bodyVPN, vpn); e != nil {
		return nil, nil, e
	}
	return name, attrs, nil
}

// post creates an object: SEMP's defaults (fresh), then the body's
// attributes, of which the name is required.
func (vc vpnCollection[T, A]) post(c *sempCall, b A, vpn string) *sempErr {
	name, attrs, err := vc.body(c, vpn)
	if err != nil {
		return err
	}
	if e := required(vc.nameAttr, name); e != nil {
		return e
	}
	v := vc.fresh(*name)
	if e := vc.changes(attrs, &v); e != nil {
		return e
	}
	if cerr := vc.create(b, vpn, v); cerr != nil {
		return adminErr(cerr)
	}
	return vc.write(c, vpn, v)
}

// patch changes the object the path names; a name in the body must be the
// same. The body is checked on a copy of the object first, and applied to
// the object itself in the broker's update.
func (vc vpnCollection[T, A]) patch(c *sempCall, b A, vpn string) *sempErr {
	name, attrs, err := vc.body(c, vpn)
	if err != nil {
		return err
	}
	target := c.r.PathValue("name")
	if e := matchesPath(vc.nameAttr, name, target); e != nil {
		return e
	}
	probe, err := vc.find(c, b, vpn)
	if err != nil {
		return err
	}
	if e := vc.changes(maps.Clone(attrs), &probe); e != nil {
		return e
	}
	if uerr := vc.update(b, vpn, target, func(v *T) { _ = vc.changes(attrs, v) }); uerr != nil {
		return adminErr(uerr)
	}
	return vc.get(c, b, vpn)
}

func (vc vpnCollection[T, A]) delete(c *sempCall, b A, vpn string) *sempErr {
	return c.writeMetaOnlyOr(vc.remove(b, vpn, c.r.PathValue("name")), adminErr)
}
