<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:tns="urn:t" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:po="urn:po" exclude-result-prefixes="po">
  <!-- literal result elements carry the stylesheet's namespaces (a QName in content needs them), minus excluded ones -->
  <xsl:template match="/">
    <tns:out xsi:type="tns:T">
      <plain xsl:exclude-result-prefixes="tns xsi">no namespaces here</plain>
      <d xmlns="urn:default"><e><xsl:value-of select="count(/po:order/po:item)"/></e></d>
      <xsl:element name="x"><xsl:attribute name="po:a"><xsl:value-of select="/po:order/@id"/></xsl:attribute></xsl:element>
    </tns:out>
  </xsl:template>
</xsl:stylesheet>
