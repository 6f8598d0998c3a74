<?php
// PHP SoapClient of orchd's example processes, built from the running
// orchd's ?wsdl (its service address, not one given here).
//
// usage: php client.php WSDL_URL po|approval ID
// Prints one line per call: ack/fault/status followed by key=value fields.
// ORCHD_INTEROP_CA names the CA file for https.
ini_set('soap.wsdl_cache_enabled', '0');
[$url, $kind, $id] = array_slice($argv, 1, 3);
$opts = ['trace' => true, 'exceptions' => true, 'cache_wsdl' => WSDL_CACHE_NONE];
$ca = getenv('ORCHD_INTEROP_CA');
if ($ca) {
    $opts['stream_context'] = stream_context_create(['ssl' => ['cafile' => $ca, 'verify_peer' => true, 'verify_peer_name' => true]]);
}
$client = new SoapClient($url, $opts);

function order(string $id, int $qty): array {
    return [
        'poId' => $id, 'orderDate' => '2007-06-01',
        'customer' => ['id' => 'CUST-42', 'name' => 'Acme Widgets Ltd', 'email' => 'buyer@acme.example'],
        'items' => ['item' => [
            ['sku' => 'SKU-A100', 'qty' => $qty, 'unitPrice' => '19.99'],
            ['sku' => 'SKU-B200', 'qty' => 1, 'unitPrice' => '250.00'],
        ]],
        'shipTo' => ['street' => '1 Industrial Way', 'city' => 'Springfield', 'postalCode' => '12345', 'country' => 'US'],
    ];
}

if ($kind === 'po') {
    $ack = $client->submitPurchaseOrder(order($id, 2));
    printf("ack poId=%s status=%s total=%s\n", $ack->poId, $ack->status, $ack->total);
    try {
        $client->submitPurchaseOrder(order($id . '-BAD', 0));
        echo "nofault\n";
    } catch (SoapFault $f) {
        $detail = $f->detail->orderFault ?? null;
        printf("fault code=%s poId=%s element=%s\n", $f->faultcode, $detail->poId ?? '', $detail ? 'orderFault' : '');
    }
} else {
    $st = $client->requestApproval(['requestId' => $id, 'amount' => '1200.00', 'requester' => 'ann', 'timeout' => 'PT1H']);
    printf("status requestId=%s status=%s\n", $st->requestId, $st->status);
    $st = $client->decide(['requestId' => $id, 'approved' => true, 'approver' => 'bob']);
    printf("status requestId=%s status=%s\n", $st->requestId, $st->status);
}
