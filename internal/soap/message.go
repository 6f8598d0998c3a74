package soap

import (
	"fmt"
	"io"
	"slices"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/exchange"
)

// rpcPrefix is the prefix the encoder gives the rpc wrapper element.
const rpcPrefix = "m"

// wrapperName returns the rpc wrapper element name of op's input or output.
func wrapperName(op *exchange.Operation, response bool) exchange.QName {
	if response {
		return exchange.QName{Space: op.Namespace, Local: op.Name + "Response"}
	}
	return exchange.QName{Space: op.Namespace, Local: op.Name}
}

// partElementName returns the body element name a document-style part is
// carried in: its element, or for a type-typed part an unqualified element
// named after the part.
func partElementName(p exchange.PartDesc) exchange.QName {
	if !p.Element.IsZero() {
		return p.Element
	}
	return exchange.QName{Local: p.Name}
}

// bodyParts returns the parts of desc that op's binding carries in the
// body of its input (response false) or output (response true).
func bodyParts(op *exchange.Operation, desc *exchange.MessageDesc, response bool) []exchange.PartDesc {
	if sp := op.Parts(response); sp != nil {
		return sp.Body
	}
	return desc.Parts
}

// decodeMessage maps the body elements and header blocks of a request
// (response false) or response (response true) of op onto desc's parts.
// env must hold self-contained, detached elements (as DecodeEnvelope
// returns them); they become the message's parts, so the caller must not
// use them afterwards. The header blocks that became parts are removed
// from env.Headers. Errors wrap ErrMessage.
func decodeMessage(op *exchange.Operation, desc *exchange.MessageDesc, env *Envelope, response bool) (*exchange.Message, error) {
	body := env.Body
	if desc == nil {
		if len(body) > 0 {
			return nil, fmt.Errorf("%w: operation %s has no message here, body has %s", ErrMessage, op.Name, qnameOf(body[0]))
		}
		return nil, nil
	}
	msg := &exchange.Message{Name: desc.Name, Parts: make(map[string]*etree.Element, len(desc.Parts))}
	parts := desc.Parts
	if sp := op.Parts(response); sp != nil {
		parts = sp.Body
		if err := decodeHeaders(op, sp.Headers, env, msg); err != nil {
			return nil, err
		}
	}
	if op.Style == exchange.RPC {
		return msg, decodeRPC(op, parts, body, response, msg)
	}
	used := make([]bool, len(body))
	next := 0 // parts are expected in order; fall back to a search
	for _, p := range parts {
		want := partElementName(p)
		found := -1
		if next < len(body) && qnameOf(body[next]) == want {
			found = next
		} else {
			for i, b := range body {
				if !used[i] && qnameOf(b) == want {
					found = i
					break
				}
			}
		}
		if found < 0 {
			return nil, fmt.Errorf("%w: %s: missing part %s (element %s)", ErrMessage, op.Name, p.Name, want)
		}
		used[found] = true
		next = found + 1
		msg.Parts[p.Name] = body[found]
	}
	for i, u := range used {
		if !u {
			return nil, fmt.Errorf("%w: %s: unexpected body element %s", ErrMessage, op.Name, qnameOf(body[i]))
		}
	}
	return msg, nil
}

// decodeHeaders moves the header blocks that carry header parts from
// env.Headers into msg. A required header part with no block is an error
// naming the part.
func decodeHeaders(op *exchange.Operation, hps []exchange.HeaderPart, env *Envelope, msg *exchange.Message) error {
	for _, h := range hps {
		want := partElementName(h.PartDesc)
		found := -1
		for i, b := range env.Headers {
			if qnameOf(b) == want {
				found = i
				break
			}
		}
		if found < 0 {
			if h.Optional {
				continue
			}
			return fmt.Errorf("%w: %s: missing SOAP header part %s (header block %s)", ErrMessage, op.Name, h.Name, want)
		}
		msg.Parts[h.Name] = env.Headers[found]
		env.Headers = slices.Delete(env.Headers, found, found+1)
	}
	return nil
}

// decodeRPC fills msg from an rpc/literal body.
func decodeRPC(op *exchange.Operation, parts []exchange.PartDesc, body []*etree.Element, response bool, msg *exchange.Message) error {
	want := wrapperName(op, response)
	if len(body) != 1 {
		return fmt.Errorf("%w: %s: rpc body must hold one wrapper element %s, has %d elements", ErrMessage, op.Name, want, len(body))
	}
	w := body[0]
	// Partners are allowed a differently named response wrapper.
	if got := qnameOf(w); !response && got != want {
		return fmt.Errorf("%w: %s: rpc wrapper is %s, want %s", ErrMessage, op.Name, got, want)
	}
	accessors := w.ChildElements()
	used := make([]bool, len(accessors))
	for _, p := range parts {
		ai := -1
		for i, a := range accessors {
			if !used[i] && a.Tag == p.Name {
				ai = i
				break
			}
		}
		if ai < 0 {
			return fmt.Errorf("%w: %s: missing part accessor %s", ErrMessage, op.Name, p.Name)
		}
		used[ai] = true
		acc := accessors[ai]
		if p.Element.IsZero() {
			msg.Parts[p.Name] = detach(acc)
			continue
		}
		var el *etree.Element
		for _, c := range acc.ChildElements() {
			el = c
			break
		}
		if el == nil || qnameOf(el) != p.Element {
			return fmt.Errorf("%w: %s: part accessor %s must hold element %s", ErrMessage, op.Name, p.Name, p.Element)
		}
		msg.Parts[p.Name] = detach(el)
	}
	for i, u := range used {
		if !u {
			return fmt.Errorf("%w: %s: unexpected part accessor %s", ErrMessage, op.Name, accessors[i].Tag)
		}
	}
	return nil
}

// encodeMessage writes an envelope of version v carrying msg as the input
// (response false) or output (response true) of op, plus header elements.
// The parts the binding carries as header blocks come first in the Header.
// Parts are serialized in place: neither they nor msg are modified. Errors
// wrap ErrMessage.
func encodeMessage(w io.Writer, v exchange.SOAPVersion, op *exchange.Operation, desc *exchange.MessageDesc, msg *exchange.Message, headers []*etree.Element, response bool) error {
	if desc == nil {
		return fmt.Errorf("%w: operation %s has no message to send", ErrMessage, op.Name)
	}
	descs := desc.Parts
	if sp := op.Parts(response); sp != nil {
		descs = sp.Body
		if len(sp.Headers) > 0 {
			hdrs := make([]*etree.Element, 0, len(sp.Headers)+len(headers))
			for _, h := range sp.Headers {
				el := msg.Part(h.Name)
				if el == nil {
					if h.Optional {
						continue
					}
					return fmt.Errorf("%w: %s: message has no header part %s", ErrMessage, op.Name, h.Name)
				}
				hdrs = append(hdrs, el)
			}
			headers = append(hdrs, headers...)
		}
	}
	parts := make([]*etree.Element, len(descs))
	for i, p := range descs {
		el := msg.Part(p.Name)
		if el == nil {
			return fmt.Errorf("%w: %s: message has no part %s", ErrMessage, op.Name, p.Name)
		}
		parts[i] = el
	}
	if op.Style != exchange.RPC {
		return EncodeEnvelope(w, v, headers, parts)
	}
	wn := wrapperName(op, response)
	return writeEnvelope(w, v, headers, func(xw etree.Writer) {
		prefix := ""
		if wn.Space != "" {
			prefix = rpcPrefix
		}
		xw.WriteString("<")
		if prefix != "" {
			xw.WriteString(prefix + ":" + wn.Local + " xmlns:" + prefix + `="`)
			writeText(xw, wn.Space)
			xw.WriteString(`">`)
		} else {
			xw.WriteString(wn.Local + ">")
		}
		for i, p := range descs {
			if p.Element.IsZero() {
				// A type-typed part's value is its accessor.
				writeElement(xw, parts[i])
				continue
			}
			writeTag(xw, "", p.Name, false)
			writeElement(xw, parts[i])
			writeTag(xw, "", p.Name, true)
		}
		writeTag(xw, prefix, wn.Local, true)
	})
}
