package wssec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Credentials are the users a provided endpoint accepts, read from a
// file of lines
//
//	# comment
//	ann:$2y$10$...           a bcrypt hash (htpasswd -B): PasswordText only
//	bob:{PLAIN}s3cret        a plain secret: PasswordText and PasswordDigest
//
// one user a line; blank lines and lines starting with # are skipped.
type Credentials struct {
	users map[string]credential
}

// credential is one user's: a bcrypt hash or a plain secret.
type credential struct {
	hash  []byte // bcrypt
	plain []byte // {PLAIN}
}

// plainPrefix marks a plain secret in a credentials file.
const plainPrefix = "{PLAIN}"

// ErrFileMode is the error of a credentials file that users other than
// its owner may read or write.
var ErrFileMode = errors.New("the credentials file may be read or written by users other than its owner (chmod 600)")

// LoadCredentials reads a credentials file. It refuses one that group or
// others may read or write, and names the line of a malformed entry
// (never its content).
func LoadCredentials(path string) (*Credentials, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkMode(path, st); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return CredentialsOf(path, st, b)
}

// checkMode refuses a credentials file group or others may read or write.
func checkMode(path string, st fs.FileInfo) error {
	if st.Mode()&fs.ModePerm&0o077 != 0 {
		return fmt.Errorf("%s (mode %04o): %w", path, st.Mode()&fs.ModePerm, ErrFileMode)
	}
	return nil
}

// CredentialsOf parses b, the content of the credentials file path whose
// information is st (read by the caller, as bundlefs does), refusing it
// as LoadCredentials does.
func CredentialsOf(path string, st fs.FileInfo, b []byte) (*Credentials, error) {
	if err := checkMode(path, st); err != nil {
		return nil, err
	}
	c, err := ParseCredentials(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseCredentials reads the content of a credentials file.
func ParseCredentials(b []byte) (*Credentials, error) {
	c := &Credentials{users: map[string]credential{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
			continue
		}
		user, secret, ok := strings.Cut(line, ":")
		switch {
		case !ok || user == "" || strings.TrimSpace(user) != user:
			return nil, fmt.Errorf("line %d: want user:$2y$... (bcrypt) or user:{PLAIN}secret", n)
		case secret == "":
			return nil, fmt.Errorf("line %d: user %q has no password", n, user)
		}
		if _, dup := c.users[user]; dup {
			return nil, fmt.Errorf("line %d: user %q appears twice", n, user)
		}
		var cr credential
		switch {
		case strings.HasPrefix(secret, plainPrefix) && len(secret) > len(plainPrefix):
			cr.plain = []byte(secret[len(plainPrefix):])
		case isBcrypt(secret):
			cr.hash = []byte(secret)
		default:
			return nil, fmt.Errorf("line %d: user %q: the password is neither a bcrypt hash ($2a$, $2b$, $2y$) nor {PLAIN}secret", n, user)
		}
		c.users[user] = cr
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(c.users) == 0 {
		return nil, errors.New("no user")
	}
	return c, nil
}

// isBcrypt reports whether s looks like a bcrypt hash: $2a$, $2b$ or
// $2y$, two cost digits, $ and 53 characters.
func isBcrypt(s string) bool {
	return len(s) == 60 && s[0] == '$' && s[1] == '2' && strings.ContainsRune("aby", rune(s[2])) && s[3] == '$' &&
		s[4] >= '0' && s[4] <= '3' && s[5] >= '0' && s[5] <= '9' && s[6] == '$'
}

// Users is the number of users.
func (c *Credentials) Users() int { return len(c.users) }
