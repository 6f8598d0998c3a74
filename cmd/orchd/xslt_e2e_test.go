package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// xslE2E maps a tns:req to a tns:resp; n = "stop" terminates it and
// n = "none" makes a result that is not an element.
const xslE2E = `<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:tns="urn:e2e">
  <xsl:param name="tag" select="'no tag'"/>
  <xsl:template match="/tns:req">
    <xsl:if test="tns:n = 'stop'"><xsl:message terminate="yes">asked to stop</xsl:message></xsl:if>
    <xsl:choose>
      <xsl:when test="tns:n = 'none'">just text</xsl:when>
      <xsl:otherwise>
        <tns:resp><tns:a><xsl:value-of select="concat($tag, ':', tns:id)"/><xsl:for-each select="tns:*"><xsl:sort select="local-name()" order="descending"/>/<xsl:value-of select="local-name()"/></xsl:for-each></tns:a></tns:resp>
      </xsl:otherwise>
    </xsl:choose>
  </xsl:template>
</xsl:stylesheet>
`

// TestDoXslTransform runs bpel:doXslTransform in an XPath 1.0 and an
// XPath 2.0 process over real SOAP: the stylesheet of the bundle maps the
// request (with a parameter) to the reply, and its errors are the faults
// WS-BPEL names.
func TestDoXslTransform(t *testing.T) {
	deploy := t.TempDir()
	body := `
  <sequence>
    <receive partnerLink="client" operation="run" variable="in" createInstance="yes"/>
    <assign><copy><from>bpel:doXslTransform('map.xsl', $in.payload, 'tag', concat('T', $in.payload/tns:n))</from><to variable="out" part="payload"/></copy></assign>
    <reply partnerLink="client" operation="run" variable="out"/>
  </sequence>`
	for _, name := range []string{"Xsl1", "Xsl2"} {
		writeProcess(t, deploy, name, "127.0.0.1:1", body, true)
		bp := filepath.Join(deploy, name, name+".bpel")
		src, err := os.ReadFile(bp)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(src), `xmlns:tns="urn:e2e">`, `xmlns:tns="urn:e2e" xmlns:bpel="http://docs.oasis-open.org/wsbpel/2.0/process/executable">`, 1)
		if name == "Xsl2" {
			s = strings.Replace(s, `<process name="Xsl2"`, `<process name="Xsl2" expressionLanguage="urn:oasis:names:tc:wsbpel:2.0:sublang:xpath2.0"`, 1)
		}
		if err := os.WriteFile(bp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(deploy, name, "map.xsl"), []byte(xslE2E), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := startOrchd(t, "--deploy", deploy)
	for _, name := range []string{"Xsl1", "Xsl2"} {
		t.Run(name, func(t *testing.T) {
			r := callRun(t, o.base, name, "X-1", "7")
			if r.status != 200 || !strings.Contains(r.body, ">T7:X-1/n/id<") {
				t.Fatalf("status %d body %s, want the stylesheet's mapping", r.status, r.body)
			}
			r = callRun(t, o.base, name, "X-2", "stop")
			code, reason := faultCode(t, r.body)
			if r.status != 500 || code != "Server" || !strings.Contains(reason, "subLanguageExecutionFault") || !strings.Contains(reason, "asked to stop") {
				t.Fatalf("status %d code %q reason %q, want subLanguageExecutionFault with the message", r.status, code, reason)
			}
			r = callRun(t, o.base, name, "X-3", "none")
			if _, reason := faultCode(t, r.body); r.status != 500 || !strings.Contains(reason, "xsltInvalidSource") {
				t.Fatalf("status %d reason %q, want xsltInvalidSource for a text result", r.status, reason)
			}
			// the process still serves
			if r := callRun(t, o.base, name, "X-4", "8"); r.status != 200 || !strings.Contains(r.body, ">T8:X-4/n/id<") {
				t.Fatalf("status %d body %s", r.status, r.body)
			}
		})
	}
}
