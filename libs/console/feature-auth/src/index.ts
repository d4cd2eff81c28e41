export { SignInPage } from './lib/sign-in.page';
