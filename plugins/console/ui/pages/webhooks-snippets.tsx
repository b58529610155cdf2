/**
 * Code for the receiver that verifies a delivery exactly as the service signs it
 * (core/webhooks/signature.ts, spec 6.4): `X-Switchboard-Signature-256` is `sha256=` and the
 * lower-case hex HMAC-SHA256, keyed with the secret's text as UTF-8, of
 * `<X-Switchboard-Timestamp>.<raw body>`; the timestamp is Unix seconds and a receiver refuses
 * one more than 300 seconds away, and compares in constant time.
 */
import { useState } from 'preact/hooks';
import { Card, SelectField } from '../components.tsx';

type Language = 'node' | 'python' | 'go' | 'php' | 'ruby';

const LANGUAGES: readonly { value: Language; label: string }[] = [
  { value: 'node', label: 'Node.js (Express)' },
  { value: 'python', label: 'Python (Flask)' },
  { value: 'go', label: 'Go (net/http)' },
  { value: 'php', label: 'PHP' },
  { value: 'ruby', label: 'Ruby (Sinatra)' },
];

export function VerificationSnippet() {
  const [language, setLanguage] = useState<Language>('node');
  return (
    <Card title="Verify the signature">
      <p class="hint">
        Check every delivery over its raw body exactly as received (parsing and re-serializing the JSON breaks the signature). The secret is
        read from the environment variable <code>SWITCHBOARD_WEBHOOK_SECRET</code>.
      </p>
      <SelectField label="Your receiver's language" value={language} options={LANGUAGES} onValue={setLanguage} />
      <pre class="snippet" aria-label={`Verification code, ${LANGUAGES.find((l) => l.value === language)!.label}`}>
        <code>{SNIPPETS[language]}</code>
      </pre>
    </Card>
  );
}

const SNIPPETS: Record<Language, string> = {
  node: `import express from 'express';
import { createHmac, timingSafeEqual } from 'node:crypto';

const SECRET = process.env.SWITCHBOARD_WEBHOOK_SECRET;

function verify(rawBody, timestamp, signature) {
  if (!timestamp || !signature || !/^\\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = 'sha256=' + createHmac('sha256', SECRET)
    .update(timestamp + '.').update(rawBody).digest('hex');
  const a = Buffer.from(expected);
  const b = Buffer.from(signature);
  return a.length === b.length && timingSafeEqual(a, b);
}

const app = express();
// express.raw keeps the body as the bytes received (a Buffer).
app.post('/switchboard', express.raw({ type: 'application/json' }), (req, res) => {
  const ok = verify(req.body, req.get('X-Switchboard-Timestamp'), req.get('X-Switchboard-Signature-256'));
  if (!ok) return res.sendStatus(401);
  const delivery = JSON.parse(req.body.toString('utf8'));
  // … handle delivery; deduplicate on delivery.data.key.id
  res.sendStatus(200);
});
app.listen(3000);
`,
  python: `import hashlib
import hmac
import os
import time

from flask import Flask, abort, request

SECRET = os.environ["SWITCHBOARD_WEBHOOK_SECRET"].encode()


def verify(raw_body: bytes, timestamp: str, signature: str) -> bool:
    if not (timestamp.isascii() and timestamp.isdigit()) or not signature:
        return False
    if abs(time.time() - int(timestamp)) > 300:
        return False
    signed = timestamp.encode() + b"." + raw_body
    expected = "sha256=" + hmac.new(SECRET, signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


app = Flask(__name__)


@app.post("/switchboard")
def receive():
    raw = request.get_data()  # the bytes received, before any parsing
    timestamp = request.headers.get("X-Switchboard-Timestamp", "")
    signature = request.headers.get("X-Switchboard-Signature-256", "")
    if not verify(raw, timestamp, signature):
        abort(401)
    delivery = request.get_json()
    # … handle delivery; deduplicate on delivery["data"]["key"]["id"]
    return "", 200
`,
  go: `package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

var secret = []byte(os.Getenv("SWITCHBOARD_WEBHOOK_SECRET"))

func verify(body []byte, timestamp, signature string) bool {
	ts, err := strconv.ParseUint(timestamp, 10, 63)
	if err != nil || signature == "" {
		return false
	}
	if age := time.Now().Unix() - int64(ts); age > 300 || age < -300 {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	expected := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(expected), []byte(signature))
}

func main() {
	http.HandleFunc("/switchboard", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || !verify(body, r.Header.Get("X-Switchboard-Timestamp"), r.Header.Get("X-Switchboard-Signature-256")) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// … json.Unmarshal(body, &delivery); deduplicate on data.key.id
		w.WriteHeader(http.StatusOK)
	})
	http.ListenAndServe(":3000", nil)
}
`,
  php: `<?php
$secret = getenv('SWITCHBOARD_WEBHOOK_SECRET');
$raw = file_get_contents('php://input'); // the bytes received
$timestamp = $_SERVER['HTTP_X_SWITCHBOARD_TIMESTAMP'] ?? '';
$signature = $_SERVER['HTTP_X_SWITCHBOARD_SIGNATURE_256'] ?? '';

$fresh = ctype_digit($timestamp) && abs(time() - (int) $timestamp) <= 300;
$expected = 'sha256=' . hash_hmac('sha256', $timestamp . '.' . $raw, $secret);
if (!$fresh || !hash_equals($expected, $signature)) {
    http_response_code(401);
    exit;
}

$delivery = json_decode($raw, true);
// … handle $delivery; deduplicate on $delivery['data']['key']['id']
http_response_code(200);
`,
  ruby: `require 'json'
require 'openssl'
require 'rack/utils'
require 'sinatra'

SECRET = ENV.fetch('SWITCHBOARD_WEBHOOK_SECRET')

post '/switchboard' do
  request.body.rewind
  raw = request.body.read # the bytes received
  timestamp = request.env['HTTP_X_SWITCHBOARD_TIMESTAMP'].to_s
  signature = request.env['HTTP_X_SWITCHBOARD_SIGNATURE_256'].to_s
  halt 401 unless timestamp.match?(/\\A\\d+\\z/) && (Time.now.to_i - timestamp.to_i).abs <= 300
  expected = 'sha256=' + OpenSSL::HMAC.hexdigest('SHA256', SECRET, "#{timestamp}.#{raw}")
  halt 401 unless Rack::Utils.secure_compare(expected, signature)
  delivery = JSON.parse(raw)
  # … handle delivery; deduplicate on delivery['data']['key']['id']
  200
end
`,
};
