/**
 * Agent cards: validate a remote's card against its generation's schema,
 * rewrite it so callers keep going through the gateway, bound its text.
 * The pieces live beside this file; this is the one import others need.
 */
export { validateCard, detectGeneration, prepareCardValidators, type CardValidation } from './card-validate.js';
export {
  rewriteCard,
  rewriteExtendedCardResult,
  CardProblemError,
  MAX_SKILLS,
  MAX_SKILL_LIST_ITEMS,
  MAX_INTERFACES,
  type RewriteOptions,
  type ExtendedCardRewrite,
} from './card-rewrite.js';
export { CARD_BOUNDS, sanitizeTree, httpUrl } from './card-text.js';
