package reference

import (
	"bytes"
	"strconv"
)

// escape writes s as XML character data.
func escape(b *bytes.Buffer, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// elem writes <tag>escaped text</tag>.
func elem(b *bytes.Buffer, open, text, close string) {
	b.WriteString(open)
	escape(b, text)
	b.WriteString(close)
}

// writeCRMRequest writes crm:recordPurchaseOrder in the shape of
// crm-request.xml.
func writeCRMRequest(b *bytes.Buffer, o *order, total string) {
	b.WriteString(`<soapenv:Envelope xmlns:soapenv="` + soapNS + `" xmlns:crm="` + crmNS + `"><soapenv:Body><crm:recordPurchaseOrder>`)
	elem(b, "<crm:poId>", o.poID, "</crm:poId>")
	b.WriteString("<crm:account>")
	elem(b, "<crm:accountId>", o.custID, "</crm:accountId>")
	elem(b, "<crm:accountName>", o.custName, "</crm:accountName>")
	elem(b, "<crm:contactEmail>", o.custEmail, "</crm:contactEmail>")
	b.WriteString("</crm:account><crm:lineCount>")
	b.WriteString(strconv.Itoa(len(o.items)))
	b.WriteString("</crm:lineCount><crm:orderTotal>")
	b.WriteString(total)
	b.WriteString("</crm:orderTotal></crm:recordPurchaseOrder></soapenv:Body></soapenv:Envelope>")
}

// writeERPRequest writes erp:createWorkOrder in the shape of
// erp-request.xml.
func writeERPRequest(b *bytes.Buffer, o *order, crmRef string) {
	b.WriteString(`<soapenv:Envelope xmlns:soapenv="` + soapNS + `" xmlns:erp="` + erpNS + `"><soapenv:Body><erp:createWorkOrder>`)
	elem(b, "<erp:poId>", o.poID, "</erp:poId>")
	elem(b, "<erp:crmRef>", crmRef, "</erp:crmRef>")
	b.WriteString("<erp:shipTo>")
	elem(b, "<erp:street>", o.street, "</erp:street>")
	elem(b, "<erp:city>", o.city, "</erp:city>")
	elem(b, "<erp:postalCode>", o.postal, "</erp:postalCode>")
	elem(b, "<erp:country>", o.country, "</erp:country>")
	b.WriteString("</erp:shipTo><erp:lines>")
	for _, it := range o.items {
		elem(b, "<erp:line><erp:sku>", it.sku, "</erp:sku>")
		elem(b, "<erp:quantity>", it.qty, "</erp:quantity></erp:line>")
	}
	b.WriteString("</erp:lines></erp:createWorkOrder></soapenv:Body></soapenv:Envelope>")
}

// writeAck writes po:purchaseOrderAck in the shape of po-ack.xml.
func writeAck(b *bytes.Buffer, poID, crmRef, woID, total string) {
	b.WriteString(`<soapenv:Envelope xmlns:soapenv="` + soapNS + `"><soapenv:Body><po:purchaseOrderAck xmlns:po="` + poNS + `">`)
	elem(b, "<po:poId>", poID, "</po:poId>")
	elem(b, "<po:crmRef>", crmRef, "</po:crmRef>")
	elem(b, "<po:workOrderId>", woID, "</po:workOrderId>")
	b.WriteString("<po:total>")
	b.WriteString(total)
	b.WriteString("</po:total><po:status>ACCEPTED</po:status></po:purchaseOrderAck></soapenv:Body></soapenv:Envelope>")
}

// writeFault writes a SOAP 1.1 fault envelope, like orchd's.
func writeFault(b *bytes.Buffer, f *fault) {
	b.WriteString(`<soapenv:Envelope xmlns:soapenv="` + soapNS + `"><soapenv:Body><soapenv:Fault><faultcode>`)
	b.WriteString(f.code)
	b.WriteString("</faultcode>")
	elem(b, "<faultstring>", f.msg, "</faultstring>")
	b.WriteString("</soapenv:Fault></soapenv:Body></soapenv:Envelope>")
}
