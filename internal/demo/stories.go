package demo

// Stories are the demo's stories, in the order they run. A module adds its
// story here (and its file, story_<name>.go).
func Stories() []Story {
	return []Story{
		registrationStory(),
		hubClientInfoStory(),
		directoryStory(),
		tokensStory(),
		chargingStory(),
		upiStory(),
		directPaymentStory(),
		webhooksStory(),
	}
}
