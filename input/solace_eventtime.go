package input

import (
	"errors"
	"fmt"
	"time"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/connect-solace/connect-solace/internal/session"
)

// This file holds the solace input's event time: where solace_timestamp
// comes from (field timestamp).

func (r *solaceReader) eventTime(msg *service.Message, in *session.Inbound) time.Time {
	switch r.tsMode {
	case siTimestampReceive:
		return in.ReceiveTimestamp
	case siTimestampMapping:
		res, err := msg.BloblangQuery(r.tsMapping)
		if err == nil && res == nil {
			err = errors.New("mapping deleted the root")
		}
		if err == nil {
			var v any
			if v, err = res.AsStructured(); err == nil {
				if ts, ok := asTime(v); ok {
					return ts
				}
				err = fmt.Errorf("mapping result %T is not a timestamp", v)
			}
		}
		r.log.Debugf("timestamp_mapping failed, using the receive time: %v", err)
		return in.ReceiveTimestamp
	default:
		if !in.SenderTimestamp.IsZero() {
			return in.SenderTimestamp
		}
		return in.ReceiveTimestamp
	}
}

// asTime accepts what a timestamp mapping plausibly returns (a timestamp, an
// RFC 3339 string or Unix seconds), as Bloblang's own conversions do.
func asTime(v any) (time.Time, bool) {
	ts, err := bloblang.ValueAsTimestamp(v)
	return ts, err == nil
}
