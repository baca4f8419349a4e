#!/usr/bin/env bash
# The README's walkthrough as one script, from an operator's first partner to a commission report, against a running
# service (`make run`). Each step checks its answer and stops with the reason when one is not what it should be.
#
#   SERVICE_URL  the service         (default http://127.0.0.1:$PORT, PORT default 8080; the partner API is $SERVICE_URL/v1)
#   ADMIN_URL    the admin port      (default http://127.0.0.1:$ADMIN_PORT, ADMIN_PORT default 8081; the admin API is
#                                     $ADMIN_URL/admin/v1). Either may be given with its API path.
#   ADMIN_TOKEN  admin token         (default: the file DATA_DIR/admin-token, DATA_DIR defaulting to ./data)
#   STORE_DOMAIN the store's domain  (default loja.example)
#   COVER_URL    the product's cover (default https://$STORE_DOMAIN/camiseta.jpg)
#   EXPECT_COVER the cover verdict to require: accepted or rejected (default: report it, require nothing)
#
# Needs curl and jq. Every run makes a new partner, with a new CNPJ, so it can be repeated on the same data.
set -euo pipefail

# The tools' one address convention (docs/adr/0064-one-address-convention.md, infra/ops/cli/service-address.ts).
SERVICE_URL=${SERVICE_URL:-http://127.0.0.1:${PORT:-8080}}
SERVICE_URL=${SERVICE_URL%/}
ADMIN_URL=${ADMIN_URL:-http://127.0.0.1:${ADMIN_PORT:-8081}}
ADMIN_URL=${ADMIN_URL%/}
API=${SERVICE_URL%/v1}/v1
ADMIN_API=${ADMIN_URL%/admin/v1}/admin/v1
ADMIN_TOKEN=${ADMIN_TOKEN:-$(cat "${DATA_DIR:-data}/admin-token")}
STORE_DOMAIN=${STORE_DOMAIN:-loja.example}
COVER_URL=${COVER_URL:-https://$STORE_DOMAIN/camiseta.jpg}
EXPECT_COVER=${EXPECT_COVER:-}

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'walkthrough failed: %s\n' "$*" >&2; exit 1; }

# call METHOD URL EXPECTED_STATUS [BODY] [AUTH_HEADER]: prints the answer's body, fails on another status.
call() {
  local method=$1 url=$2 expected=$3 body=${4:-} auth=${5:-"Authorization: Bearer $KEY"} out status
  out=$(mktemp)
  if [ -n "$body" ]; then
    status=$(curl -sS -o "$out" -w '%{http_code}' -X "$method" -H "$auth" -H 'Content-Type: application/json' --data-binary "$body" "$url")
  else
    status=$(curl -sS -o "$out" -w '%{http_code}' -X "$method" -H "$auth" "$url")
  fi
  if [ "$status" != "$expected" ]; then fail "$method $url answered $status, not $expected: $(cat "$out")"; fi
  cat "$out"
  rm -f "$out"
}
admin() { call "$1" "$ADMIN_API$2" "$3" "${4:-}" "Authorization: Bearer $ADMIN_TOKEN"; }

# A CNPJ of 14 digits with valid check digits (modulo 11 of the Receita Federal), new at each run.
new_cnpj() {
  local base digits sum i d1 d2
  base=$(printf '%08d0001' $(((RANDOM * 32768 + RANDOM) % 100000000)))
  digits=$base
  for weights in "5 4 3 2 9 8 7 6 5 4 3 2" "6 5 4 3 2 9 8 7 6 5 4 3 2"; do
    sum=0; i=0
    for w in $weights; do sum=$((sum + ${digits:i:1} * w)); i=$((i + 1)); done
    d1=$((sum % 11)); if [ $d1 -lt 2 ]; then d2=0; else d2=$((11 - d1)); fi
    digits=$digits$d2
  done
  echo "$digits"
}

step "the operator creates a partner (a hub) and a test key; the key is shown only once"
P=$(admin POST /partners 201 '{"name":"Loja Azul","partner_type":"hub"}' | jq -r .partner_id)
KEY=$(admin POST "/partners/$P/keys" 201 '{"environment":"test"}' | jq -r .api_key)
echo "partner $P, key ${KEY:0:12}…"

step "the partner checks its key"
call GET "$API/me" 200 | jq -c .

step "the partner registers a store; the operator approves it and its domain"
call PUT "$API/stores/loja-1" 200 "{\"name\":\"Loja Azul\",\"cnpj\":\"$(new_cnpj)\",\"website_url\":\"https://$STORE_DOMAIN\",\"domains\":[\"$STORE_DOMAIN\"]}" | jq -c '{store_id, status}'
admin POST "/partners/$P/test/stores/loja-1/approve" 200 | jq -c '{store_id, status, domains_approved}'

step "the partner sends a product; it is pending while its cover is checked"
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
call PUT "$API/products/sku-1" 200 "{\"store_id\":\"loja-1\",\"title\":\"Camiseta azul\",\"product_url\":\"https://$STORE_DOMAIN/p/1\",
  \"image_urls\":[\"$COVER_URL\"],\"price_cents\":2999,\"available\":true,\"updated_at\":\"$NOW\",
  \"commission\":{\"type\":\"percentage\",\"rate\":12.5},\"shipping\":{\"type\":\"fixed\",\"cost_cents\":1500}}" | jq -c '{sku, state, expected_commission_cents}'

step "the cover check's verdict (seconds)"
STATE=pending
for _ in $(seq 1 120); do
  PRODUCT=$(call GET "$API/products/sku-1" 200)
  STATE=$(jq -r .state <<<"$PRODUCT")
  [ "$STATE" = pending ] || break
  sleep 0.5
done
jq -c '{sku, state, reasons, svc_url}' <<<"$PRODUCT"
case "$STATE" in
  accepted) echo "accepted: the product is live in the test area (svc_url is where it appears)." ;;
  rejected)
    echo "rejected: $(jq -r '.reasons[0].code + " — " + .reasons[0].message' <<<"$PRODUCT")"
    echo "The cover must open over HTTPS from a public address on a domain of the store, be JPEG/PNG/WebP and measure"
    echo "at least 500 px on its shorter side. $STORE_DOMAIN is only an example name: serve the cover from your store's"
    echo "own domain or CDN (declared in domains or image_hosts) and send the product again." ;;
  *) echo "still $STATE: the check has not finished" ;;
esac
if [ -n "$EXPECT_COVER" ] && [ "$STATE" != "$EXPECT_COVER" ]; then fail "the cover check gave $STATE, not $EXPECT_COVER"; fi

step "a test click on the product (sandbox), then the paid order it brought, then a partial refund"
CLICK=$(call POST "$API/sandbox/clicks" 200 '{"store_id":"loja-1","sku":"sku-1"}')
CLICK_ID=$(jq -r .click_id <<<"$CLICK")
PAID_AT=$(jq -r .occurred_at <<<"$CLICK") # a payment at or after its click
ORDER="\"order_id\":\"9001\",\"store_id\":\"loja-1\",\"click_id\":\"$CLICK_ID\",\"currency\":\"BRL\",\"paid_at\":\"$PAID_AT\""
call POST "$API/conversions" 200 "{\"event_id\":\"evt-9001-paid\",$ORDER,\"status\":\"paid\",\"occurred_at\":\"$PAID_AT\",
  \"items\":[{\"sku\":\"sku-1\",\"quantity\":2,\"unit_price_cents\":2999,\"refunded_cents\":0}]}" | jq -c '{order_id, status, net_cents, expected_commission_cents}'
REFUND_AT=$(jq -rn --arg t "$PAID_AT" '$t | sub("\\.[0-9]+"; "") | fromdateiso8601 + 1 | todateiso8601') # a second later
call POST "$API/conversions" 200 "{\"event_id\":\"evt-9001-refund-1\",$ORDER,\"status\":\"refunded\",\"occurred_at\":\"$REFUND_AT\",
  \"items\":[{\"sku\":\"sku-1\",\"quantity\":2,\"unit_price_cents\":2999,\"refunded_cents\":2999}]}" | jq -c '{order_id, status, net_cents, expected_commission_cents}'

step "the clicks and the commission report of the last 30 days"
call GET "$API/clicks" 200 | jq -c '{clicks: (.data | length), since, until}'
call GET "$API/reports/commission" 200 | jq -c .totals

printf '\nwalkthrough done: partner %s, product %s\n' "$P" "$STATE"
