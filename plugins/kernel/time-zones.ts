/** Time-zone rules (IANA zones through Intl) for plugins that compute business hours. */
export { intlZoneRules } from '../../adapters/time/zone-rules.ts';
