// Package output holds the connect-solace output plugins (solace, jms). Each
// plugin registers itself with Benthos in init(), so a blank import makes it
// available.
package output
