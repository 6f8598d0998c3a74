package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
)

// tlsConfig are serve's TLS flags: the listener's certificate, and what
// partner calls over https trust and present.
type tlsConfig struct {
	cert, key               string
	clientCA, adminClientCA string
	partnerCA               string
	partnerCert, partnerKey string
}

func tlsFlags(fs *flag.FlagSet, c *tlsConfig) {
	fs.StringVar(&c.cert, "tls-cert", "", "serve HTTPS with this certificate (PEM, chain after the leaf); needs --tls-key")
	fs.StringVar(&c.key, "tls-key", "", "private key (PEM) of --tls-cert")
	fs.StringVar(&c.clientCA, "tls-client-ca", "", "PEM file of CA certificates: clients of the TLS listeners (and of --admin-listen, unless --admin-tls-client-ca) must present a certificate they signed; needs --tls-cert")
	fs.StringVar(&c.adminClientCA, "admin-tls-client-ca", "", "PEM file of CA certificates whose client certificates --admin-listen requires (in place of --tls-client-ca there); needs --tls-cert")
	fs.StringVar(&c.partnerCA, "partner-ca", "", "PEM file of CA certificates trusted for https partners, besides the system roots")
	fs.StringVar(&c.partnerCert, "partner-cert", "", "client certificate (PEM) presented to https partners; needs --partner-key")
	fs.StringVar(&c.partnerKey, "partner-key", "", "private key (PEM) of --partner-cert")
}

// load reads the files the flags name: the listener's TLS configuration
// (nil: plain HTTP) and the partner client's (nil: system roots, no
// client certificate).
func (c *tlsConfig) load() (server, partner *tls.Config, err error) {
	if (c.cert == "") != (c.key == "") {
		return nil, nil, errors.New("--tls-cert and --tls-key go together")
	}
	if c.cert != "" {
		cert, err := tls.LoadX509KeyPair(c.cert, c.key)
		if err != nil {
			return nil, nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		server = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if err := requireClientCerts(server, c.clientCA, "--tls-client-ca"); err != nil {
			return nil, nil, err
		}
	} else if c.clientCA != "" || c.adminClientCA != "" {
		return nil, nil, errors.New("--tls-client-ca and --admin-tls-client-ca need --tls-cert and --tls-key (client certificates are a TLS matter)")
	}
	if (c.partnerCert == "") != (c.partnerKey == "") {
		return nil, nil, errors.New("--partner-cert and --partner-key go together")
	}
	if c.partnerCA == "" && c.partnerCert == "" {
		// The system roots, no client certificate: the transport's
		// defaults.
		return server, nil, nil
	}
	partner = &tls.Config{MinVersion: tls.VersionTLS12}
	if c.partnerCA != "" {
		pem, err := os.ReadFile(c.partnerCA)
		if err != nil {
			return nil, nil, fmt.Errorf("--partner-ca: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("--partner-ca %s: no PEM certificate in it", c.partnerCA)
		}
		partner.RootCAs = roots
	}
	if c.partnerCert != "" {
		cert, err := tls.LoadX509KeyPair(c.partnerCert, c.partnerKey)
		if err != nil {
			return nil, nil, fmt.Errorf("--partner-cert/--partner-key: %w", err)
		}
		partner.Certificates = []tls.Certificate{cert}
	}
	return server, partner, nil
}

// requireClientCerts makes conf require a client certificate signed by
// a CA of the PEM file caFile (named by flag in errors); no file: no
// change.
func requireClientCerts(conf *tls.Config, caFile, flag string) error {
	if caFile == "" {
		return nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s %s: no PEM certificate in it", flag, caFile)
	}
	conf.ClientCAs = pool
	conf.ClientAuth = tls.RequireAndVerifyClientCert
	return nil
}

// admin returns the TLS configuration of --admin-listen: the listener's,
// with --admin-tls-client-ca's CAs in place of --tls-client-ca's when
// set.
func (c *tlsConfig) admin(server *tls.Config) (*tls.Config, error) {
	if server == nil || c.adminClientCA == "" {
		return server, nil
	}
	conf := server.Clone()
	return conf, requireClientCerts(conf, c.adminClientCA, "--admin-tls-client-ca")
}
