package agent

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"time"
)

// The transport (docs/distributed.md, "What an agent trusts"): an agent holding the run's
// secret serves TLS 1.3 with a certificate it makes at start for a key derived from that
// secret, and its callers pin that key. The certificate is made per run because the secret
// is, and its fingerprint is handed over with the secret by being derived from it: nothing
// but the secret travels out of band. Whoever reads the lab network's packets sees neither
// the secret nor the figures; whoever lacks the secret cannot stand in for an agent.

// tlsKeyInfo labels the derivation, so that the key is of use for this and nothing else.
const tlsKeyInfo = "arena agent TLS key v1"

// tlsKey is the run's agent key: an Ed25519 key from the secret through HKDF-SHA256.
func tlsKey(secret string) (ed25519.PrivateKey, error) {
	if err := CheckSecret(secret); err != nil {
		return nil, err
	}
	seed, err := hkdf.Key(sha256.New, []byte(secret), nil, tlsKeyInfo, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("deriving the agents' TLS key: %w", err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// ServerTLS is what an agent holding secret serves: TLS 1.3 with a self-signed certificate,
// made now, for the run's key.
func ServerTLS(secret string) (*tls.Config, error) {
	key, err := tlsKey(secret)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "arena agent"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour), // the pin is what is trusted, not the dates
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("making the agent's certificate: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, nil
}

// Listen is where an agent holding secret serves: ln in TLS with the run's key. There is no
// agent without a secret.
func Listen(ln net.Listener, secret string) (net.Listener, error) {
	cfg, err := ServerTLS(secret)
	if err != nil {
		return nil, err
	}
	return tls.NewListener(ln, cfg), nil
}

// ErrNotPinned is a handshake with an agent that does not hold the run's key.
var ErrNotPinned = errors.New("the agent's TLS key is not this run's: another run's agent, or someone in between")

// ClientTLS is how a caller holding secret reaches an agent: TLS 1.3, accepting only a peer
// whose certificate carries the run's key. The handshake's signature proves the peer holds
// it; names, dates and issuers are not looked at, since the pin, not a CA, is the trust.
func ClientTLS(secret string) (*tls.Config, error) {
	key, err := tlsKey(secret)
	if err != nil {
		return nil, err
	}
	want, _ := key.Public().(ed25519.PublicKey)
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		InsecureSkipVerify: true, // no CA chain to check: VerifyConnection checks the pin
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return ErrNotPinned
			}
			got, ok := cs.PeerCertificates[0].PublicKey.(ed25519.PublicKey)
			if !ok || !got.Equal(want) {
				return ErrNotPinned
			}
			return nil
		},
	}, nil
}

// Client is the HTTP client that reaches agents holding secret ("" for an agent on loopback
// started without one, reached in clear), and the scheme to reach them with.
func Client(secret string) (*http.Client, string, error) {
	if secret == "" {
		return &http.Client{}, "http", nil
	}
	cfg, err := ClientTLS(secret)
	if err != nil {
		return nil, "", err
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: cfg}}, "https", nil
}
