<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:po="urn:po" exclude-result-prefixes="po">
  <!-- for-each with sort, if, choose, variables with content, copy, copy-of -->
  <xsl:template match="/po:order">
    <xsl:variable name="frag"><x a="1">frag</x><x a="2"/></xsl:variable>
    <out>
      <xsl:for-each select="po:item">
        <xsl:sort select="@sku"/>
        <sku pos="{position()}"><xsl:value-of select="@sku"/></sku>
      </xsl:for-each>
      <xsl:for-each select="po:item">
        <xsl:sort select="@qty" data-type="number" order="descending"/>
        <qty><xsl:value-of select="@qty"/></qty>
      </xsl:for-each>
      <xsl:for-each select="po:item">
        <xsl:choose>
          <xsl:when test="@price &lt; 1">cheap </xsl:when>
          <xsl:when test="@price &lt; 5">mid </xsl:when>
          <xsl:otherwise>dear </xsl:otherwise>
        </xsl:choose>
        <xsl:if test="position() = last()"><xsl:text>end</xsl:text></xsl:if>
      </xsl:for-each>
      <frag count="{count($frag/x)}"><xsl:copy-of select="$frag"/></frag>
      <fragtext><xsl:value-of select="$frag"/></fragtext>
      <xsl:copy-of select="po:customer"/>
      <xsl:apply-templates select="po:item[1]" mode="copy"/>
      <num><xsl:value-of select="1 div 4"/>|<xsl:value-of select="number('1e3')"/>|<xsl:value-of select="number('x')"/></num>
    </out>
  </xsl:template>
  <xsl:template match="@*|node()" mode="copy">
    <xsl:copy><xsl:apply-templates select="@*|node()" mode="copy"/></xsl:copy>
  </xsl:template>
</xsl:stylesheet>
