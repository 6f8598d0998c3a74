package interp_test

// The default bundle of a case (testdata/sem/README.md): the WSDL, the
// process head the case's process section is the body of, and the
// deploy descriptor. A case replaces any of them by giving a section of
// the same file name.

// semWSDL is e2e.wsdl: operations run (request-response), go (one-way),
// single (its output part is outputPart) and echo (rpc, string parts
// inputPart and outputPart) of the process, call (request-response) and
// note (one-way) of the partner, messages req, resp and problem,
// properties id and n (n also for element variables of tns:req).
const semWSDL = `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions name="E2E" targetNamespace="urn:e2e"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:plnk="http://docs.oasis-open.org/wsbpel/2.0/plnktype"
    xmlns:vprop="http://docs.oasis-open.org/wsbpel/2.0/varprop" xmlns:tns="urn:e2e">
  <wsdl:types><xsd:schema targetNamespace="urn:e2e" elementFormDefault="qualified">
    <xsd:element name="req"><xsd:complexType><xsd:sequence><xsd:element name="id" type="xsd:string"/><xsd:element name="n" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
    <xsd:element name="resp"><xsd:complexType><xsd:sequence><xsd:element name="a" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
    <xsd:element name="problem"><xsd:complexType><xsd:sequence><xsd:element name="code" type="xsd:string"/></xsd:sequence></xsd:complexType></xsd:element>
  </xsd:schema></wsdl:types>
  <wsdl:message name="req"><wsdl:part name="payload" element="tns:req"/></wsdl:message>
  <wsdl:message name="resp"><wsdl:part name="payload" element="tns:resp"/></wsdl:message>
  <wsdl:message name="problem"><wsdl:part name="payload" element="tns:problem"/></wsdl:message>
  <wsdl:message name="single"><wsdl:part name="outputPart" element="tns:resp"/></wsdl:message>
  <wsdl:message name="strIn"><wsdl:part name="inputPart" type="xsd:string"/></wsdl:message>
  <wsdl:message name="strOut"><wsdl:part name="outputPart" type="xsd:string"/></wsdl:message>
  <wsdl:portType name="TestPT">
    <wsdl:operation name="run"><wsdl:input message="tns:req"/><wsdl:output message="tns:resp"/><wsdl:fault name="bad" message="tns:problem"/></wsdl:operation>
    <wsdl:operation name="go"><wsdl:input message="tns:req"/></wsdl:operation>
    <wsdl:operation name="single"><wsdl:input message="tns:req"/><wsdl:output message="tns:single"/></wsdl:operation>
    <wsdl:operation name="echo"><wsdl:input message="tns:strIn"/><wsdl:output message="tns:strOut"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:portType name="PartnerPT">
    <wsdl:operation name="call"><wsdl:input message="tns:req"/><wsdl:output message="tns:resp"/><wsdl:fault name="bad" message="tns:problem"/></wsdl:operation>
    <wsdl:operation name="note"><wsdl:input message="tns:req"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="TestBinding" type="tns:TestPT">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="run"><soap:operation soapAction="urn:e2e#run"/><wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output><wsdl:fault name="bad"><soap:fault name="bad" use="literal"/></wsdl:fault></wsdl:operation>
    <wsdl:operation name="go"><soap:operation soapAction="urn:e2e#go"/><wsdl:input><soap:body use="literal"/></wsdl:input></wsdl:operation>
    <wsdl:operation name="single"><soap:operation soapAction="urn:e2e#single"/><wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
    <wsdl:operation name="echo"><soap:operation soapAction="urn:e2e#echo" style="rpc"/><wsdl:input><soap:body use="literal" namespace="urn:e2e"/></wsdl:input><wsdl:output><soap:body use="literal" namespace="urn:e2e"/></wsdl:output></wsdl:operation>
  </wsdl:binding>
  <wsdl:binding name="PartnerBinding" type="tns:PartnerPT">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="call"><soap:operation soapAction="urn:e2e#call"/><wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output><wsdl:fault name="bad"><soap:fault name="bad" use="literal"/></wsdl:fault></wsdl:operation>
    <wsdl:operation name="note"><soap:operation soapAction="urn:e2e#note"/><wsdl:input><soap:body use="literal"/></wsdl:input></wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="TestService"><wsdl:port name="TestPort" binding="tns:TestBinding"><soap:address location="http://127.0.0.1:8080/processes/Case"/></wsdl:port></wsdl:service>
  <wsdl:service name="PartnerService"><wsdl:port name="PartnerPort" binding="tns:PartnerBinding"><soap:address location="http://partner.invalid/partner"/></wsdl:port></wsdl:service>
  <plnk:partnerLinkType name="TestLT"><plnk:role name="provider" portType="tns:TestPT"/></plnk:partnerLinkType>
  <plnk:partnerLinkType name="PartnerLT"><plnk:role name="partner" portType="tns:PartnerPT"/></plnk:partnerLinkType>
  <vprop:property name="id" type="xsd:string"/>
  <vprop:propertyAlias propertyName="tns:id" messageType="tns:req" part="payload"><vprop:query>tns:id</vprop:query></vprop:propertyAlias>
  <vprop:property name="n" type="xsd:string"/>
  <vprop:propertyAlias propertyName="tns:n" element="tns:req"><vprop:query>tns:n</vprop:query></vprop:propertyAlias>
  <vprop:propertyAlias propertyName="tns:n" messageType="tns:req" part="payload"><vprop:query>tns:n</vprop:query></vprop:propertyAlias>
</wsdl:definitions>
`

// semHead opens Case.bpel: partner links client (the process's) and
// partner, variables in, more and ev (tns:req), out, p1 and p2
// (tns:resp), element variables r (tns:resp) and q (tns:req), str
// (xsd:string),
// correlation sets cs (on tns:id) and cn (on tns:n). The case's process
// section follows it, then </process>.
const semHead = `<?xml version="1.0" encoding="UTF-8"?>
<process name="Case" targetNamespace="urn:e2e:process"
    xmlns="http://docs.oasis-open.org/wsbpel/2.0/process/executable"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:e2e">
  <import importType="http://schemas.xmlsoap.org/wsdl/" location="e2e.wsdl" namespace="urn:e2e"/>
  <partnerLinks>
    <partnerLink name="client" partnerLinkType="tns:TestLT" myRole="provider"/>
    <partnerLink name="partner" partnerLinkType="tns:PartnerLT" partnerRole="partner"/>
  </partnerLinks>
  <variables>
    <variable name="in" messageType="tns:req"/>
    <variable name="more" messageType="tns:req"/>
    <variable name="out" messageType="tns:resp"/>
    <variable name="p1" messageType="tns:resp"/>
    <variable name="p2" messageType="tns:resp"/>
    <variable name="r" element="tns:resp"/>
    <variable name="q" element="tns:req"/>
    <variable name="ev" messageType="tns:req"/>
    <variable name="str" type="xsd:string"/>
  </variables>
  <correlationSets><correlationSet name="cs" properties="tns:id"/><correlationSet name="cn" properties="tns:n"/></correlationSets>
`

// semDeploy is deploy.xml; {{in-memory}} becomes true or false by mode.
const semDeploy = `<?xml version="1.0" encoding="UTF-8"?>
<deploy xmlns="http://www.apache.org/ode/schemas/dd/2007/03" xmlns:pns="urn:e2e:process" xmlns:tns="urn:e2e">
  <process name="pns:Case">
    <in-memory>{{in-memory}}</in-memory>
    <provide partnerLink="client"><service name="tns:TestService" port="TestPort"/></provide>
    <invoke partnerLink="partner"><service name="tns:PartnerService" port="PartnerPort"/></invoke>
  </process>
</deploy>
`
