package ccsmp

// This file is the reflection into the Go client's private fields: where a
// message keeps its native handle and its disposed flag, and where a
// receiver keeps its flow's handle, as in v1.10.1. Each is checked against
// the types and fields it expects, so that a client upgrade that changes
// them turns the native path off instead of reading garbage.

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"solace.dev/go/messaging/pkg/solace"
	"solace.dev/go/messaging/pkg/solace/message"
)

// handleLayout records, per concrete message type, whether its first word is
// the native message handle, as it is in solace.dev/go/messaging v1.10.1
// (InboundMessageImpl embeds MessageImpl whose first field is
// messagePointer). Checked once per type through reflection, so a client
// upgrade that changes the layout turns the native read off (and the
// receiver counts the fallback) instead of reading garbage.
var handleLayout typeMemo[bool]

// HandleOf returns the native handle of msg, for Read, when its type is laid
// out as verified and it is not disposed of.
func HandleOf(msg message.Message) (uintptr, bool) {
	if msg == nil {
		return 0, false
	}
	if !handleLayout.get(reflect.TypeOf(msg), layoutHoldsHandle) {
		return 0, false
	}
	if d, ok := msg.(interface{ IsDisposed() bool }); ok && d.IsDisposed() {
		return 0, false
	}
	h := *(*uintptr)(reflectPointer(msg))
	return h, h != 0
}

func layoutHoldsHandle(rt reflect.Type) bool {
	if rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return false
	}
	st := rt.Elem()
	for st.Kind() == reflect.Struct && st.NumField() > 0 {
		f := st.Field(0)
		if f.Offset != 0 {
			return false
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			st = f.Type
			continue
		}
		// cgo spells uintptr_t as a C unsigned long, so the field is a
		// uint64 (or uintptr) the size of a pointer.
		k := f.Type.Kind()
		return f.Name == "messagePointer" &&
			(k == reflect.Uintptr || k == reflect.Uint64 || k == reflect.Uint) &&
			f.Type.Size() == unsafe.Sizeof(uintptr(0))
	}
	return false
}

// reflectPointer is the address of the struct msg points to.
func reflectPointer(msg message.Message) unsafe.Pointer { return reflect.ValueOf(msg).UnsafePointer() }

// FlowHandleOf returns the CCSMP handle of the flow behind pr, read from the
// client's private fields as in v1.10.1 (persistentMessageReceiverImpl's
// internalFlow, a *core.ccsmpBackedPersistentReceiver whose flow, a
// *ccsmp.SolClientFlow, holds the handle as pointer). Every step checks the
// type and field it expects, and the handle must name a flow bound to queue
// (CCSMP validates handles, so a wrong word is refused, not followed): with
// any doubt it returns false and messages are settled through the Go API.
func FlowHandleOf(pr solace.PersistentMessageReceiver, queue string) (uintptr, bool) {
	h, ok := flowHandleField(pr)
	if !ok || h == 0 {
		return 0, false
	}
	if q, ok := flowQueue(h); !ok || q != queue {
		return 0, false
	}
	return h, true
}

func flowHandleField(pr solace.PersistentMessageReceiver) (h uintptr, ok bool) {
	defer func() {
		// reflect panics on a shape it does not expect; that only means
		// the layout is not the verified one.
		if recover() != nil {
			h, ok = 0, false
		}
	}()
	step := func(v reflect.Value, typ, field string) (reflect.Value, bool) {
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().String() != typ || v.Elem().Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f := v.Elem().FieldByName(field)
		return f, f.IsValid()
	}
	v, ok := step(reflect.ValueOf(pr), "*receiver.persistentMessageReceiverImpl", "internalFlow")
	if !ok || v.Kind() != reflect.Interface || v.IsNil() {
		return 0, false
	}
	if v, ok = step(v.Elem(), "*core.ccsmpBackedPersistentReceiver", "flow"); !ok {
		return 0, false
	}
	if v, ok = step(v, "*ccsmp.SolClientFlow", "pointer"); !ok {
		return 0, false
	}
	switch v.Kind() {
	case reflect.Uintptr, reflect.Uint64, reflect.Uint:
		if v.Type().Size() != unsafe.Sizeof(uintptr(0)) {
			return 0, false
		}
		return uintptr(v.Uint()), true
	}
	return 0, false
}

// BufferedOf returns how many received messages wait in the Go client's
// own buffer of pr, read from its private field as in v1.10.1
// (persistentMessageReceiverImpl's buffer, a channel: CCSMP's callback
// pushes into it, the client's dispatch goroutine pops from it); false when
// the field is not where or what that version has.
func BufferedOf(pr solace.PersistentMessageReceiver) (n int, ok bool) {
	defer func() {
		if recover() != nil {
			n, ok = 0, false
		}
	}()
	v := reflect.ValueOf(pr)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().String() != "*receiver.persistentMessageReceiverImpl" {
		return 0, false
	}
	f := v.Elem().FieldByName("buffer")
	if !f.IsValid() || f.Kind() != reflect.Chan || f.IsNil() {
		return 0, false
	}
	// Len is allowed on an unexported field (it reads no value out).
	return f.Len(), true
}

// disposeLayout records, per concrete message type, the offset of the
// disposed flag (an int32 the API's Dispose sets by compare-and-swap) when
// the type is laid out as in v1.10.1: the handle first (layoutHoldsHandle),
// then disposed, in the embedded MessageImpl.
var disposeLayout typeMemo[int] // the offset, or -1 when not verified

// FreesOnSettle reports whether Settle frees msg in its own call, as the
// API's Dispose would, rather than disposing of it through the API after.
func FreesOnSettle(msg message.InboundMessage) bool {
	_, ok := disposedOffset(msg)
	return ok
}

func disposedOffset(msg message.InboundMessage) (uintptr, bool) {
	off := disposeLayout.get(reflect.TypeOf(msg), findDisposed)
	return uintptr(off), off >= 0
}

// typeMemo remembers what compute says of each concrete message type, with
// the last type asked about in front of the map: every message a client
// delivers is of one type, and hashing the type for a map lookup, twice per
// message (read and settle), cost more than the rest of a settlement's Go
// side.
type typeMemo[V any] struct {
	last atomic.Pointer[typeMemoEntry[V]]
	all  sync.Map // reflect.Type -> V
}

type typeMemoEntry[V any] struct {
	rt reflect.Type
	v  V
}

func (m *typeMemo[V]) get(rt reflect.Type, compute func(reflect.Type) V) V {
	if e := m.last.Load(); e != nil && e.rt == rt {
		return e.v
	}
	v, known := m.all.Load(rt)
	if !known {
		v, _ = m.all.LoadOrStore(rt, compute(rt))
	}
	m.last.Store(&typeMemoEntry[V]{rt: rt, v: v.(V)})
	return v.(V)
}

func findDisposed(rt reflect.Type) int {
	if !layoutHoldsHandle(rt) {
		return -1
	}
	st := rt.Elem()
	// Down the embedded first fields to the struct holding the handle.
	for st.Field(0).Anonymous && st.Field(0).Type.Kind() == reflect.Struct {
		st = st.Field(0).Type
	}
	if st.NumField() < 2 {
		return -1
	}
	f := st.Field(1)
	if f.Name != "disposed" || f.Type.Kind() != reflect.Int32 {
		return -1
	}
	// The embedded structs all sit at offset 0 (layoutHoldsHandle).
	return int(f.Offset)
}

// DirectBacklogOf returns a function that says how many received messages
// wait in the Go client's own buffer of dr, read from its private field as
// in v1.10.1 (directMessageReceiverImpl's buffer, a channel: CCSMP's
// callback pushes into it, ReceiveMessage or the client's dispatch goroutine
// pops from it); false when the field is not where or what that version has.
func DirectBacklogOf(dr solace.DirectMessageReceiver) (backlog func() int, ok bool) {
	defer func() {
		if recover() != nil {
			backlog, ok = nil, false
		}
	}()
	v := reflect.ValueOf(dr)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().String() != "*receiver.directMessageReceiverImpl" {
		return nil, false
	}
	f := v.Elem().FieldByName("buffer")
	if !f.IsValid() || f.Kind() != reflect.Chan || f.IsNil() {
		return nil, false
	}
	// Len is allowed on an unexported field (it reads no value out).
	return f.Len, true
}
