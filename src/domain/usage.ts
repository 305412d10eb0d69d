/** Tokens one model call spent, as the provider reported them. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}
