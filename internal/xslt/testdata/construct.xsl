<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:po="urn:po" xmlns:r="urn:result" exclude-result-prefixes="po">
  <!-- element/attribute/text/comment/pi constructors, namespaces, keys, number, current() -->
  <xsl:output method="xml" indent="no"/>
  <xsl:key name="bysku" match="po:item" use="@sku"/>
  <xsl:template match="/">
    <r:doc>
      <xsl:element name="r:made">
        <xsl:attribute name="kind">computed</xsl:attribute>
        <xsl:attribute name="x:y" namespace="urn:x">ns attr</xsl:attribute>
        <xsl:text>  kept  </xsl:text>
      </xsl:element>
      <xsl:element name="plain" namespace="urn:other"><xsl:value-of select="name(/*)"/></xsl:element>
      <xsl:comment> made <xsl:value-of select="count(//po:item)"/></xsl:comment>
      <xsl:processing-instruction name="note">v="1"</xsl:processing-instruction>
      <key><xsl:value-of select="key('bysku', 'C3')"/></key>
      <xsl:for-each select="//po:item">
        <n><xsl:number/>.<xsl:number format="a"/>.<xsl:number format="I"/>.<xsl:number value="position() * 10" format="001"/>
          <xsl:value-of select="count(//po:item[@qty &gt; current()/@qty])"/></n>
      </xsl:for-each>
      <ids same="{generate-id(/*) = generate-id(/po:order)}" differ="{generate-id(//po:item[1]) != generate-id(//po:item[2])}"/>
      <xsl:message>not terminating</xsl:message>
      <v><xsl:value-of select="system-property('xsl:version')"/></v>
    </r:doc>
  </xsl:template>
</xsl:stylesheet>
