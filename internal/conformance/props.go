package conformance

import (
	"strconv"
	"strings"
)

// Properties is a parsed Java .properties file.
type Properties struct {
	// Values maps keys to values; Keys lists the keys in file order.
	Values map[string]string
	Keys   []string
}

// Get returns the value of key and whether it is set.
func (p *Properties) Get(key string) (string, bool) {
	v, ok := p.Values[key]
	return v, ok
}

// ParseProperties reads data with java.util.Properties.load's rules: each
// byte is an ISO-8859-1 character; '#' and '!' start comment lines; a line
// ending in an odd number of backslashes continues on the next one, whose
// leading white space is dropped; the key ends at the first unescaped '=',
// ':' or white space; \t \n \r \f \uXXXX and \<other> (the other character)
// are escapes in keys and values. A later key replaces an earlier one.
func ParseProperties(data []byte) *Properties {
	runes := make([]rune, len(data))
	for i, b := range data {
		runes[i] = rune(b)
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(runes), "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(text, "\n")
	p := &Properties{Values: map[string]string{}}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continues(line) {
			line = line[:len(line)-1]
			if i+1 >= len(lines) {
				break
			}
			i++
			line += strings.TrimLeft(lines[i], " \t\f")
		}
		key, value := splitKeyValue(line)
		k := unescape(key)
		if _, seen := p.Values[k]; !seen {
			p.Keys = append(p.Keys, k)
		}
		p.Values[k] = unescape(value)
	}
	return p
}

// continues reports whether a logical line ends in an odd number of
// backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits a logical line into its raw (still escaped) key and
// value.
func splitKeyValue(line string) (key, value string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	key, rest := line[:end], line[end:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescape applies the .properties escapes.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			if c != '\\' {
				b.WriteByte(c)
			}
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u') // malformed: Java throws; keep the text
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
