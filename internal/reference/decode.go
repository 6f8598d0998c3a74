package reference

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// item is one po:item, texts as received.
type item struct{ sku, qty, unitPrice string }

// order is the part of po:purchaseOrder the process uses. Texts are kept
// as received (the BPEL copies them verbatim); numbers are parsed when the
// total is computed.
type order struct {
	poID                          string
	custID, custName, custEmail   string
	street, city, postal, country string
	items                         []item
	seen                          uint16 // bits of the required fields found
	text                          []byte // scratch for element text
}

// Required fields, as bits of order.seen.
const (
	fPoID = 1 << iota
	fCustID
	fCustName
	fCustEmail
	fStreet
	fCity
	fPostal
	fCountry
	fAll = 1<<iota - 1
)

// fieldNames names the required fields, in bit order, for faults.
func fieldName(bit uint16) string {
	names := [...]string{"po:poId", "po:customer/po:id", "po:customer/po:name", "po:customer/po:email",
		"po:shipTo/po:street", "po:shipTo/po:city", "po:shipTo/po:postalCode", "po:shipTo/po:country"}
	for i, n := range names {
		if bit&(1<<i) != 0 {
			return n
		}
	}
	return "?"
}

func (o *order) reset() {
	items := o.items[:0]
	text := o.text[:0]
	*o = order{items: items, text: text}
}

// decodeOrder decodes a SOAP 1.1 envelope holding po:purchaseOrder into o.
func decodeOrder(b []byte, o *order) *fault {
	d := xml.NewDecoder(bytes.NewReader(b))
	depth := 0
	var section string // local name of the po:purchaseOrder child being read
	gotRoot, gotOrder := false, false
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) && depth == 0 && gotRoot {
				break
			}
			if errors.Is(err, io.EOF) && depth == 0 {
				return clientFault("malformed XML: no document element")
			}
			return clientFault("malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			n := t.Name
			switch depth {
			case 1:
				if n.Local != "Envelope" || n.Space != soapNS {
					return clientFault("not a SOAP 1.1 envelope: root element is {%s}%s", n.Space, n.Local)
				}
				if gotRoot {
					return clientFault("malformed XML: more than one document element")
				}
				gotRoot = true
				continue
			case 2:
				if n.Space == soapNS && n.Local == "Header" {
					if err := d.Skip(); err != nil {
						return clientFault("malformed XML: %v", err)
					}
					depth--
					continue
				}
				if n.Space != soapNS || n.Local != "Body" {
					return clientFault("unexpected element {%s}%s in the SOAP envelope", n.Space, n.Local)
				}
				continue
			case 3:
				if gotOrder {
					return clientFault("SOAP Body holds more than one element")
				}
				if n.Space != poNS || n.Local != "purchaseOrder" {
					return clientFault("unexpected body element {%s}%s: want {%s}purchaseOrder", n.Space, n.Local, poNS)
				}
				gotOrder = true
				continue
			}
			if n.Space != poNS {
				// Not ours: ignore it and what it holds.
				if err := d.Skip(); err != nil {
					return clientFault("malformed XML: %v", err)
				}
				depth--
				continue
			}
			var f *fault
			switch depth {
			case 4:
				section = n.Local
				if n.Local == "poId" {
					f = o.leaf(d, &o.poID, fPoID)
					depth--
				} else if n.Local != "customer" && n.Local != "items" && n.Local != "shipTo" {
					f = skip(d)
					depth--
				}
			case 5:
				f = o.sectionChild(d, section, n.Local)
				if section == "items" && n.Local == "item" && f == nil {
					o.items = append(o.items, item{})
					f = o.readItem(d)
				}
				depth--
			default:
				f = skip(d)
				depth--
			}
			if f != nil {
				return f
			}
		case xml.EndElement:
			depth--
			if depth == 3 {
				section = ""
			}
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return clientFault("malformed XML: text outside the document element")
			}
			if depth <= 3 && len(bytes.TrimSpace(t)) > 0 {
				return clientFault("unexpected text in the SOAP envelope")
			}
		}
	}
	if !gotOrder {
		return clientFault("SOAP Body is empty")
	}
	if missing := fAll &^ o.seen; missing != 0 {
		return clientFault("purchase order is missing required data: %s", fieldName(missing))
	}
	if len(o.items) == 0 {
		return clientFault("purchase order has no items")
	}
	return nil
}

// sectionChild reads the child local of customer or shipTo. For an item of
// items it does nothing (the caller reads the item).
func (o *order) sectionChild(d *xml.Decoder, section, local string) *fault {
	switch section + "/" + local {
	case "customer/id":
		return o.leaf(d, &o.custID, fCustID)
	case "customer/name":
		return o.leaf(d, &o.custName, fCustName)
	case "customer/email":
		return o.leaf(d, &o.custEmail, fCustEmail)
	case "shipTo/street":
		return o.leaf(d, &o.street, fStreet)
	case "shipTo/city":
		return o.leaf(d, &o.city, fCity)
	case "shipTo/postalCode":
		return o.leaf(d, &o.postal, fPostal)
	case "shipTo/country":
		return o.leaf(d, &o.country, fCountry)
	case "items/item":
		return nil
	}
	return skip(d)
}

// readItem reads the children of a po:item up to its end tag.
func (o *order) readItem(d *xml.Decoder) *fault {
	it := &o.items[len(o.items)-1]
	var seen uint16
	for {
		tok, err := d.Token()
		if err != nil {
			return clientFault("malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			var f *fault
			switch {
			case t.Name.Space == poNS && t.Name.Local == "sku":
				f = o.leaf(d, &it.sku, 0)
				seen |= 1
			case t.Name.Space == poNS && t.Name.Local == "qty":
				f = o.leaf(d, &it.qty, 0)
				seen |= 2
			case t.Name.Space == poNS && t.Name.Local == "unitPrice":
				f = o.leaf(d, &it.unitPrice, 0)
				seen |= 4
			default:
				f = skip(d)
			}
			if f != nil {
				return f
			}
		case xml.EndElement:
			if seen != 7 {
				return clientFault("purchase order is missing required data: po:items/po:item[%d] needs po:sku, po:qty and po:unitPrice", len(o.items))
			}
			return nil
		}
	}
}

// leaf reads the text content of the element just started (descendants'
// text included, as XPath string() does) into dst.
func (o *order) leaf(d *xml.Decoder, dst *string, bit uint16) *fault {
	o.text = o.text[:0]
	depth := 1
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return clientFault("malformed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			o.text = append(o.text, t...)
		}
	}
	*dst = string(o.text)
	o.seen |= bit
	return nil
}

func skip(d *xml.Decoder) *fault {
	if err := d.Skip(); err != nil {
		return clientFault("malformed XML: %v", err)
	}
	return nil
}

// total checks the items and returns the order total as the process
// writes it: two decimals, rounded half up (XPath round()).
func (o *order) total() (string, *fault) {
	sum := 0.0
	for _, it := range o.items {
		q, p := xpathNumber(it.qty), xpathNumber(it.unitPrice)
		if !(q > 0) || !(p >= 0) || math.IsInf(q, 0) || math.IsInf(p, 0) {
			return "", clientFault("every item needs a positive qty and a non-negative unitPrice")
		}
		sum += q * p
	}
	cents := math.Floor(sum*100 + 0.5)
	if cents > 1e15 {
		return "", clientFault("order total %g is too large", sum)
	}
	c := int64(cents)
	b := strconv.AppendInt(make([]byte, 0, 24), c/100, 10)
	b = append(b, '.', byte('0'+c%100/10), byte('0'+c%10))
	return string(b), nil
}

// xpathNumber converts a string as XPath 1.0 number() does: optional
// whitespace, an optional minus, digits with an optional decimal point;
// anything else is NaN.
func xpathNumber(s string) float64 {
	s = strings.Trim(s, " \t\r\n")
	t := strings.TrimPrefix(s, "-")
	digits, dots := 0, 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return math.NaN()
		}
	}
	if digits == 0 || dots > 1 {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// decodePartnerResponse returns the text of ns:field in the ns:respLocal
// element of a SOAP 1.1 response, or a fault describing what is wrong
// (including a SOAP fault the partner answered with).
func decodePartnerResponse(b []byte, ns, respLocal, field string) (string, *fault) {
	d := xml.NewDecoder(bytes.NewReader(b))
	depth := 0
	inResp, inFault := false, false
	var faultCode, faultString, value string
	found := false
	var text []byte
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) && depth == 0 {
				break
			}
			return "", &fault{msg: "malformed response: " + err.Error()}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			n := t.Name
			switch {
			case depth == 1 && (n.Space != soapNS || n.Local != "Envelope"):
				return "", &fault{msg: "response is not a SOAP 1.1 envelope"}
			case depth == 3 && n.Space == soapNS && n.Local == "Fault":
				inFault = true
			case depth == 3 && n.Space == ns && n.Local == respLocal:
				inResp = true
			case depth == 4 && inResp && n.Space == ns && n.Local == field,
				depth == 4 && inFault && (n.Local == "faultcode" || n.Local == "faultstring"):
				text = text[:0]
				inner := 1
				for inner > 0 {
					tok, err := d.Token()
					if err != nil {
						return "", &fault{msg: "malformed response: " + err.Error()}
					}
					switch t := tok.(type) {
					case xml.StartElement:
						inner++
					case xml.EndElement:
						inner--
					case xml.CharData:
						text = append(text, t...)
					}
				}
				depth--
				switch n.Local {
				case "faultcode":
					faultCode = string(text)
				case "faultstring":
					faultString = string(text)
				default:
					value, found = strings.TrimSpace(string(text)), true
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	switch {
	case inFault:
		return "", &fault{msg: "SOAP fault " + faultCode + ": " + faultString}
	case !inResp:
		return "", &fault{msg: "response holds no {" + ns + "}" + respLocal}
	case !found || value == "":
		return "", &fault{msg: "response lacks {" + ns + "}" + field}
	}
	return value, nil
}
