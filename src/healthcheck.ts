/**
 * Container HEALTHCHECK: exits 0 when the gateway answers /healthz on
 * loopback. No shell or curl is needed in the image.
 */
import { request } from 'node:http';

const port = Number(process.env.A2A_EGRESS_OPS_PORT ?? process.env.A2A_EGRESS_PORT ?? 8080);
const req = request({ host: '127.0.0.1', port, path: '/healthz', timeout: 2_000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy());
req.on('error', () => process.exit(1));
req.end();
