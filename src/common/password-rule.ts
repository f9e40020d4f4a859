// The rule for login passwords, applied wherever one is set by a person: the operator
// API and the CLI (`users add --password`), and the account page's password change.
// Generated passwords pass it by construction. NIST SP 800-63B §5.1.1.2: a minimum length
// and a check against values a guesser tries first; the user's own ID is the first of them.

export const minLoginPasswordLength = 10

/** Why `password` cannot be `userId`'s login password, or null when it can. */
export function loginPasswordProblem(password: string, userId: string): string | null {
  if ([...password].length < minLoginPasswordLength) return `the password must be at least ${minLoginPasswordLength} characters`
  if (userId !== '' && password.toLowerCase().includes(userId.toLowerCase())) return 'the password must not contain the user ID'
  return null
}
