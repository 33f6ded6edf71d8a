package ccsmp

/*
#include <stdint.h>

// From CCSMP's solClientMsg.h, declared by hand as in ccsmp.go.
extern int solClient_msg_setAsReplyMsg(uintptr_t msg_p, unsigned char isReply);
*/
import "C"

import (
	"errors"
	"fmt"

	"solace.dev/go/messaging/pkg/solace/message"
)

// SetReply sets the SMF reply flag of msg, a message the client's
// OutboundMessageBuilder built; its publishers copy the message with the
// flag. The client's API sets the flag only through a Replier, yet a Solace
// requester takes as the answer to its request only a message so flagged
// (sent to its reply-to with its correlation id).
func SetReply(msg message.OutboundMessage) error {
	h, ok := HandleOf(msg)
	if !ok {
		return errors.New("setting the reply flag: the message's native handle cannot be read with this client")
	}
	if rc := C.solClient_msg_setAsReplyMsg(C.uintptr_t(h), 1); rc != 0 {
		return fmt.Errorf("setting the reply flag: solClient_msg_setAsReplyMsg returned %d", int(rc))
	}
	return nil
}
