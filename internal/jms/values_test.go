package jms

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMessageIDFormat(t *testing.T) {
	for range 100 {
		assert.Regexp(t, `^ID:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, NewMessageID())
	}
}
