package solacetest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// LoadTLSCertificate reads a server certificate and its private key from PEM
// files, which may be one file holding both, as PubSub+'s server
// certificate files do. An encrypted key (legacy "Proc-Type: 4,ENCRYPTED"
// PEM) is decrypted with passphrase.
func LoadTLSCertificate(certFile, keyFile, passphrase string) (tls.Certificate, error) {
	if keyFile == "" {
		keyFile = certFile
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading the TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading the TLS key: %w", err)
	}
	var certs, key []byte
	for rest := certPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			certs = append(certs, pem.EncodeToMemory(blk)...)
		}
	}
	for rest := keyPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			//lint:ignore SA1019 PubSub+ certificate files use legacy PEM encryption; there is no replacement in the standard library.
			if x509.IsEncryptedPEMBlock(blk) { //nolint:staticcheck // see above
				if passphrase == "" {
					return tls.Certificate{}, fmt.Errorf("the TLS key in %s is encrypted: give its passphrase", keyFile)
				}
				der, err := x509.DecryptPEMBlock(blk, []byte(passphrase)) //nolint:staticcheck // see above
				if err != nil {
					return tls.Certificate{}, fmt.Errorf("decrypting the TLS key in %s: %w", keyFile, err)
				}
				blk = &pem.Block{Type: blk.Type, Bytes: der}
			}
			key = pem.EncodeToMemory(blk)
			break
		}
	}
	if certs == nil {
		return tls.Certificate{}, fmt.Errorf("no certificate in %s", certFile)
	}
	if key == nil {
		return tls.Certificate{}, errors.New("no private key in " + keyFile)
	}
	cert, err := tls.X509KeyPair(certs, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("loading the TLS certificate and key: %w", err)
	}
	return cert, nil
}
