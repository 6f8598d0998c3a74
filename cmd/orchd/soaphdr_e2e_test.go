package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
)

// hdrWSDL binds a session id to a SOAP header of the process's request and
// reply, a correlation id to a header of the partner's request and a ticket
// to a header of the partner's reply.
const hdrWSDL = `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions targetNamespace="urn:hdr"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:plnk="http://docs.oasis-open.org/wsbpel/2.0/plnktype"
    xmlns:tns="urn:hdr">
  <wsdl:types><xsd:schema targetNamespace="urn:hdr" elementFormDefault="qualified">
    <xsd:element name="req"><xsd:complexType><xsd:sequence><xsd:element name="id" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
    <xsd:element name="resp"><xsd:complexType><xsd:sequence><xsd:element name="a" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
    <xsd:element name="session" type="xsd:string"/>
    <xsd:element name="corr" type="xsd:string"/>
    <xsd:element name="ticket" type="xsd:string"/>
  </xsd:schema></wsdl:types>
  <wsdl:message name="req"><wsdl:part name="payload" element="tns:req"/><wsdl:part name="session" element="tns:session"/></wsdl:message>
  <wsdl:message name="resp"><wsdl:part name="payload" element="tns:resp"/><wsdl:part name="session" element="tns:session"/></wsdl:message>
  <wsdl:message name="preq"><wsdl:part name="corr" element="tns:corr"/><wsdl:part name="payload" element="tns:req"/></wsdl:message>
  <wsdl:message name="presp"><wsdl:part name="payload" element="tns:resp"/><wsdl:part name="ticket" element="tns:ticket"/></wsdl:message>
  <wsdl:portType name="HdrPT">
    <wsdl:operation name="run"><wsdl:input message="tns:req"/><wsdl:output message="tns:resp"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:portType name="PartnerPT">
    <wsdl:operation name="call"><wsdl:input message="tns:preq"/><wsdl:output message="tns:presp"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="HdrBinding" type="tns:HdrPT">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="run"><soap:operation soapAction="urn:hdr#run"/>
      <wsdl:input><soap:body parts="payload" use="literal"/><soap:header message="tns:req" part="session" use="literal"/></wsdl:input>
      <wsdl:output><soap:body parts="payload" use="literal"/><soap:header message="tns:resp" part="session" use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:binding name="PartnerBinding" type="tns:PartnerPT">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="call"><soap:operation soapAction="urn:hdr#call"/>
      <wsdl:input><soap:body use="literal"/><soap:header message="tns:preq" part="corr" use="literal"/></wsdl:input>
      <wsdl:output><soap:body parts="payload" use="literal"/><soap:header message="tns:presp" part="ticket" use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="HdrService"><wsdl:port name="HdrPort" binding="tns:HdrBinding"><soap:address location="http://127.0.0.1:8080/processes/Hdr"/></wsdl:port></wsdl:service>
  <wsdl:service name="PartnerService"><wsdl:port name="PartnerPort" binding="tns:PartnerBinding"><soap:address location="http://PARTNER/partner"/></wsdl:port></wsdl:service>
  <plnk:partnerLinkType name="HdrLT"><plnk:role name="provider" portType="tns:HdrPT"/></plnk:partnerLinkType>
  <plnk:partnerLinkType name="PartnerLT"><plnk:role name="partner" portType="tns:PartnerPT"/></plnk:partnerLinkType>
</wsdl:definitions>
`

// hdrBPEL passes the session header to the partner as its correlation
// header ("C-" + session), answers with the partner's ticket header in the
// body and the session header echoed.
const hdrBPEL = `<?xml version="1.0" encoding="UTF-8"?>
<process name="Hdr" targetNamespace="urn:hdr:process"
    xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable" xmlns:tns="urn:hdr">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="hdr.wsdl" namespace="urn:hdr"/>
  <partnerLinks>
    <partnerLink name="client" partnerLinkType="tns:HdrLT" myRole="provider"/>
    <partnerLink name="partner" partnerLinkType="tns:PartnerLT" partnerRole="partner"/>
  </partnerLinks>
  <variables>
    <variable name="in" messageType="tns:req"/>
    <variable name="pin" messageType="tns:preq"/>
    <variable name="pout" messageType="tns:presp"/>
    <variable name="out" messageType="tns:resp"/>
  </variables>
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign>
      <copy><from variable="in" part="payload"/><to variable="pin" part="payload"/></copy>
      <copy><from><literal><tns:corr/></literal></from><to variable="pin" part="corr"/></copy>
      <copy><from>concat('C-', $in.session)</from><to variable="pin" part="corr"/></copy>
    </assign>
    <invoke partnerLink="partner" operation="call" inputVariable="pin" outputVariable="pout"/>
    <assign>
      <copy><from><literal><tns:resp><tns:a/></tns:resp></literal></from><to variable="out" part="payload"/></copy>
      <copy><from>concat($in.payload/tns:id, '/', $pout.ticket)</from><to>$out.payload/tns:a</to></copy>
      <copy><from variable="in" part="session"/><to variable="out" part="session"/></copy>
    </assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>
</process>
`

// headerPartner is a partner that checks the header block it receives and
// answers with a ticket header block.
type headerPartner struct {
	addr string
	mu   sync.Mutex
	got  []string // the corr header text of each call, or what was wrong
}

func startHeaderPartner(t *testing.T) *headerPartner {
	t.Helper()
	p := &headerPartner{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func (p *headerPartner) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	got := "bad request: " + string(body)
	doc := etree.NewDocument()
	if doc.ReadFromBytes(body) == nil {
		corr := doc.FindElement("/Envelope/Header/corr")
		req := doc.FindElement("/Envelope/Body/req")
		inBody := doc.FindElement("/Envelope/Body/corr")
		if corr != nil && corr.NamespaceURI() == "urn:hdr" && req != nil && inBody == nil {
			got = corr.Text()
		}
	}
	p.mu.Lock()
	p.got = append(p.got, got)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprint(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:h="urn:hdr">`+
		`<soapenv:Header><h:ticket>T-42</h:ticket></soapenv:Header>`+
		`<soapenv:Body><h:resp><h:a>ok</h:a></h:resp></soapenv:Body></soapenv:Envelope>`)
}

func (p *headerPartner) calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

func writeHeaderBundle(t *testing.T, deployDir, partner string) {
	t.Helper()
	dir := filepath.Join(deployDir, "Hdr")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dd := `<?xml version="1.0" encoding="UTF-8"?>
<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:pns="urn:hdr:process" xmlns:tns="urn:hdr">
  <process name="pns:Hdr">
    <in-memory>true</in-memory>
    <provide partnerLink="client"><service name="tns:HdrService" port="HdrPort"/></provide>
    <invoke partnerLink="partner"><service name="tns:PartnerService" port="PartnerPort"/></invoke>
  </process>
</deploy>
`
	files := map[string]string{"hdr.wsdl": strings.ReplaceAll(hdrWSDL, "PARTNER", partner), "Hdr.bpel": hdrBPEL, "deploy.xml": dd}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hdrRequest is a request to run with the given header blocks.
func hdrRequest(headers string) []byte {
	return []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:h="urn:hdr">` +
		`<soapenv:Header>` + headers + `</soapenv:Header>` +
		`<soapenv:Body><h:req><h:id>X7</h:id></h:req></soapenv:Body></soapenv:Envelope>`)
}

// A part the binding maps to soap:header is read from the request's
// Header and written to the reply's; header parts travel to a partner and
// back the same way; a request without the header, or with a
// mustUnderstand header nothing maps, gets a fault saying so.
func TestSOAPHeaderParts(t *testing.T) {
	partner := startHeaderPartner(t)
	deploy := t.TempDir()
	writeHeaderBundle(t, deploy, partner.addr)
	o := startOrchd(t, "--deploy", deploy)
	url := o.base + "/processes/Hdr"
	client := &http.Client{Timeout: 30 * time.Second}

	t.Run("header parts in, to the partner, back and out", func(t *testing.T) {
		r := post(t, client, url, textXML, `"urn:hdr#run"`, hdrRequest(`<h:session soapenv:mustUnderstand="1">S1</h:session>`))
		if r.status != http.StatusOK {
			t.Fatalf("status %d:\n%s\n%s", r.status, r.body, o.log())
		}
		doc := etree.NewDocument()
		if err := doc.ReadFromString(r.body); err != nil {
			t.Fatalf("reply is not XML: %v\n%s", err, r.body)
		}
		if s := doc.FindElement("/Envelope/Header/session"); s == nil || s.NamespaceURI() != "urn:hdr" || s.Text() != "S1" {
			t.Errorf("reply has no Header/{urn:hdr}session S1:\n%s", r.body)
		}
		if doc.FindElement("/Envelope/Body/session") != nil {
			t.Errorf("the session header part is in the reply's body:\n%s", r.body)
		}
		if a := doc.FindElement("/Envelope/Body/resp/a"); a == nil || a.Text() != "X7/T-42" {
			t.Errorf("reply body a is not X7/T-42 (the partner's ticket header):\n%s", r.body)
		}
		if got := partner.calls(); len(got) != 1 || got[0] != "C-S1" {
			t.Errorf("partner received %q, want one call with Header/{urn:hdr}corr C-S1", got)
		}
	})

	t.Run("missing header part", func(t *testing.T) {
		r := post(t, client, url, textXML, `"urn:hdr#run"`, hdrRequest(``))
		code, reason := faultCode(t, r.body)
		if r.status != http.StatusInternalServerError || code != "Client" ||
			!strings.Contains(reason, "missing SOAP header part session") || !strings.Contains(reason, "{urn:hdr}session") {
			t.Errorf("status %d fault %s %q, want a Client fault naming header part session", r.status, code, reason)
		}
	})

	t.Run("mustUnderstand header nothing maps", func(t *testing.T) {
		r := post(t, client, url, textXML, `"urn:hdr#run"`,
			hdrRequest(`<h:session>S2</h:session><x:auth xmlns:x="urn:other" soapenv:mustUnderstand="1">k</x:auth>`))
		code, reason := faultCode(t, r.body)
		if r.status != http.StatusInternalServerError || code != "MustUnderstand" || !strings.Contains(reason, "{urn:other}auth") {
			t.Errorf("status %d fault %s %q, want a MustUnderstand fault naming {urn:other}auth", r.status, code, reason)
		}
	})

	t.Run("unmapped headers that need no understanding", func(t *testing.T) {
		r := post(t, client, url, textXML, `"urn:hdr#run"`,
			hdrRequest(`<x:trace xmlns:x="urn:other">t</x:trace><h:session>S3</h:session>`+
				`<x:auth xmlns:x="urn:other" soapenv:mustUnderstand="1" soapenv:actor="urn:some-other-node">k</x:auth>`))
		if r.status != http.StatusOK || !strings.Contains(r.body, ">S3<") {
			t.Errorf("status %d:\n%s", r.status, r.body)
		}
	})
}
