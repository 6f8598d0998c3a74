<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:po="urn:po" exclude-result-prefixes="po">
  <!-- priorities, modes, named templates, params, built-in rules -->
  <xsl:strip-space elements="*"/>
  <xsl:param name="p" select="'default'"/>
  <xsl:variable name="n" select="count(//po:item)"/>
  <xsl:template match="/">
    <summary param="{$p}" items="{$n}" first="{po:order/po:item[1]/@sku}">
      <xsl:apply-templates select="po:order/po:item"/>
      <modes><xsl:apply-templates select="po:order/po:item" mode="short"/></modes>
      <xsl:call-template name="total">
        <xsl:with-param name="items" select="po:order/po:item"/>
      </xsl:call-template>
      <builtin><xsl:apply-templates select="po:order/po:customer" mode="none"/></builtin>
      <xsl:apply-templates select="po:order/comment() | po:order/processing-instruction()"/>
    </summary>
  </xsl:template>
  <xsl:template match="po:item">low</xsl:template>
  <xsl:template match="po:order/po:item">
    <line n="{position()}" of="{last()}"><xsl:value-of select="."/></line>
  </xsl:template>
  <xsl:template match="po:item[@qty &gt; 5]" priority="2">
    <bulk sku="{@sku}"/>
  </xsl:template>
  <xsl:template match="po:item[last()]">
    <last><xsl:value-of select="@sku"/></last>
  </xsl:template>
  <xsl:template match="*" mode="short"><xsl:value-of select="@sku"/>;</xsl:template>
  <xsl:template match="comment()">[comment:<xsl:value-of select="."/>]</xsl:template>
  <xsl:template match="processing-instruction('audit')">[pi:<xsl:value-of select="."/>]</xsl:template>
  <xsl:template name="total">
    <xsl:param name="items"/>
    <xsl:param name="unused">fallback</xsl:param>
    <total unused="{$unused}"><xsl:value-of select="sum($items/(@qty * @price))"/></total>
  </xsl:template>
</xsl:stylesheet>
