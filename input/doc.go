// Package input holds the connect-solace input plugins. Each plugin registers
// itself with Benthos in init(), so a blank import makes it available.
package input
