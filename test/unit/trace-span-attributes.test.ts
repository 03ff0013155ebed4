/**
 * The convention names the gateway writes out by hand (so it loads no
 * OpenTelemetry code while traces are off) are the ones the official
 * semantic-conventions package defines.
 */
import t from 'tap';
import * as stable from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { GRPC_CODE_NAMES, SEMCONV, callSpanName, invokesAgent, rpcMethodOf, safeUrl } from '../../src/telemetry/span-attributes.js';

t.test('semantic-convention names match @opentelemetry/semantic-conventions', async (t) => {
  t.equal(SEMCONV.RPC_SYSTEM_NAME, stable.ATTR_RPC_SYSTEM_NAME);
  t.equal(SEMCONV.RPC_METHOD, stable.ATTR_RPC_METHOD);
  t.equal(SEMCONV.RPC_STATUS_CODE, stable.ATTR_RPC_STATUS_CODE);
  t.equal(SEMCONV.ERROR_TYPE, stable.ATTR_ERROR_TYPE);
  t.equal(SEMCONV.HTTP_REQUEST_METHOD, stable.ATTR_HTTP_REQUEST_METHOD);
  t.equal(SEMCONV.HTTP_RESPONSE_STATUS_CODE, stable.ATTR_HTTP_RESPONSE_STATUS_CODE);
  t.equal(SEMCONV.HTTP_REQUEST_RESEND_COUNT, stable.ATTR_HTTP_REQUEST_RESEND_COUNT);
  t.equal(SEMCONV.SERVER_ADDRESS, stable.ATTR_SERVER_ADDRESS);
  t.equal(SEMCONV.SERVER_PORT, stable.ATTR_SERVER_PORT);
  t.equal(SEMCONV.URL_FULL, stable.ATTR_URL_FULL);
  t.equal(SEMCONV.SERVICE_NAME, stable.ATTR_SERVICE_NAME);
  t.equal(SEMCONV.SERVICE_VERSION, stable.ATTR_SERVICE_VERSION);
  t.equal(SEMCONV.SERVICE_INSTANCE_ID, incubating.ATTR_SERVICE_INSTANCE_ID);
  t.equal(SEMCONV.GEN_AI_OPERATION_NAME, incubating.ATTR_GEN_AI_OPERATION_NAME);
  t.equal(SEMCONV.GEN_AI_AGENT_NAME, incubating.ATTR_GEN_AI_AGENT_NAME);
  t.equal('invoke_agent', incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT);
  t.equal('jsonrpc', incubating.RPC_SYSTEM_NAME_VALUE_JSONRPC);
  t.equal('grpc', stable.RPC_SYSTEM_NAME_VALUE_GRPC);
  t.equal(GRPC_CODE_NAMES[4], 'DEADLINE_EXCEEDED');
  t.equal(GRPC_CODE_NAMES.length, 17);
});

t.test('span names and methods', async (t) => {
  t.equal(rpcMethodOf(OPERATIONS.SendMessage), 'lf.a2a.v1.A2AService/SendMessage');
  t.equal(rpcMethodOf(undefined), '_OTHER');
  t.equal(callSpanName(OPERATIONS.GetTask, 'grpc'), 'lf.a2a.v1.A2AService/GetTask');
  t.equal(callSpanName(undefined, 'jsonrpc'), 'jsonrpc');
  t.ok(invokesAgent(OPERATIONS.SendStreamingMessage));
  t.notOk(invokesAgent(OPERATIONS.CancelTask));
  t.equal(safeUrl('https://u:p@h.example:8443/a/b?key=secret#frag'), 'https://h.example:8443/a/b', 'no userinfo, query or fragment');
  t.equal(safeUrl('not a url'), '');
  t.equal(safeUrl(`https://h.example/${'p'.repeat(400)}`).length, 256);
});
